//! Tokens of the command language.
//!
//! Words are runs of anything but white space, quotes and the punctuation
//! `; { } ( ) ,`; whether a word is a keyword, a path, a name or a number
//! depends on where it stands, so the lexer does not decide.

use crate::error::ParseError;

/// Where a token starts: 1-based line and column (in characters), and the
/// byte offset into the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// Byte offset into the source.
    pub offset: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Semi,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Comma,
    Word(String),
    Str(String),
    Eof,
}

impl Tok {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Semi => "';'".into(),
            Tok::LBrace => "'{'".into(),
            Tok::RBrace => "'}'".into(),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::Comma => "','".into(),
            Tok::Word(w) => format!("'{w}'"),
            Tok::Str(s) => format!("string \"{s}\""),
            Tok::Eof => "end of input".into(),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

fn is_punct(c: char) -> bool {
    matches!(c, ';' | '{' | '}' | '(' | ')' | ',' | '"' | '#')
}

/// Split `src` into tokens, ending with [`Tok::Eof`].
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut out = vec![];
    let mut it = src.char_indices().peekable();
    let (mut line, mut col) = (1usize, 1usize);
    // Advance past one character, keeping line and column.
    macro_rules! bump {
        () => {{
            let next = it.next();
            if let Some((_, c)) = next {
                if c == '\n' {
                    line += 1;
                    col = 1;
                } else {
                    col += 1;
                }
            }
            next
        }};
    }
    while let Some(&(off, c)) = it.peek() {
        let pos = Pos {
            line,
            column: col,
            offset: off,
        };
        if c.is_whitespace() {
            bump!();
            continue;
        }
        if c == '#' {
            while let Some(&(_, c)) = it.peek() {
                if c == '\n' {
                    break;
                }
                bump!();
            }
            continue;
        }
        let single = match c {
            ';' => Some(Tok::Semi),
            '{' => Some(Tok::LBrace),
            '}' => Some(Tok::RBrace),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            ',' => Some(Tok::Comma),
            _ => None,
        };
        if let Some(tok) = single {
            bump!();
            out.push(Token { tok, pos });
            continue;
        }
        if c == '"' {
            bump!();
            let mut s = String::new();
            loop {
                let Some((eoff, c)) = bump!() else {
                    return Err(ParseError::at(src, pos, "unterminated string"));
                };
                match c {
                    '"' => break,
                    '\\' => {
                        let epos = Pos {
                            line,
                            column: col - 1,
                            offset: eoff,
                        };
                        match bump!() {
                            Some((_, 'n')) => s.push('\n'),
                            Some((_, 't')) => s.push('\t'),
                            Some((_, 'r')) => s.push('\r'),
                            Some((_, '0')) => s.push('\0'),
                            Some((_, c @ ('"' | '\\'))) => s.push(c),
                            Some((_, c)) => {
                                return Err(ParseError::at(
                                    src,
                                    epos,
                                    format!(
                                        "unknown escape '\\{c}' (use \\\" \\\\ \\n \\t \\r or \\0)"
                                    ),
                                ))
                            }
                            None => return Err(ParseError::at(src, pos, "unterminated string")),
                        }
                    }
                    c => s.push(c),
                }
            }
            out.push(Token {
                tok: Tok::Str(s),
                pos,
            });
            continue;
        }
        let mut w = String::new();
        while let Some(&(_, c)) = it.peek() {
            if c.is_whitespace() || is_punct(c) {
                break;
            }
            w.push(c);
            bump!();
        }
        out.push(Token {
            tok: Tok::Word(w),
            pos,
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        pos: Pos {
            line,
            column: col,
            offset: src.len(),
        },
    });
    Ok(out)
}
