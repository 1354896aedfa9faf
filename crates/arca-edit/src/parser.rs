//! Recursive-descent parser for h5edit's command language (plus the group
//! and dataset commands this tool adds).

use crate::ast::{AttrName, Command, Definition, Modify, ObjKind, Op, Space, TypeSpec, Value};
use crate::error::ParseError;
use crate::lexer::{lex, Pos, Tok, Token};
use crate::types::{is_number, type_by_name};

type PResult<T> = Result<T, ParseError>;

/// Parse a whole command text.
///
/// ```
/// use arca_edit::{parse, Op};
/// let cmds = parse("CREATE GROUP /run1; CREATE /run1/gain {H5T_IEEE_F64LE DATA {1.5}};").unwrap();
/// assert_eq!(cmds.len(), 2);
/// assert!(matches!(&cmds[0].op, Op::CreateGroup { path } if path == "/run1"));
/// ```
///
/// # Errors
/// [`ParseError`] at the first token that does not fit.
pub fn parse(src: &str) -> Result<Vec<Command>, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser { src, toks, i: 0 };
    let mut out = vec![];
    loop {
        match p.peek() {
            Tok::Eof => break,
            // Empty statements (a stray `;`) are harmless.
            Tok::Semi => {
                p.next();
                continue;
            }
            _ => {}
        }
        let start = p.pos();
        let op = p.command()?;
        let end = p.expect(&Tok::Semi, "';' to end the command")?;
        out.push(Command {
            op,
            line: start.line,
            column: start.column,
            text: command_text(&src[start.offset..=end.pos.offset]),
        });
    }
    Ok(out)
}

/// A command's text on one line: comments dropped, white space squeezed.
fn command_text(raw: &str) -> String {
    let mut out = String::new();
    let mut in_str = false;
    let mut escaped = false;
    let mut comment = false;
    let mut space = false;
    for c in raw.chars() {
        if comment {
            if c == '\n' {
                comment = false;
                space = true;
            }
            continue;
        }
        if in_str {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match c {
            '#' => comment = true,
            c if c.is_whitespace() => space = true,
            c => {
                if space && !out.is_empty() {
                    out.push(' ');
                }
                space = false;
                if c == '"' {
                    in_str = true;
                }
                out.push(c);
            }
        }
    }
    out
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    i: usize,
}

fn kw(t: &Tok, k: &str) -> bool {
    matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case(k))
}

/// Whether a word looks like a type name (`H5T_…`), so a definition is meant.
fn is_type_word(t: &Tok) -> bool {
    matches!(t, Tok::Word(w) if w.len() > 4 && w.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("H5T_")))
}

fn obj_kind(t: &Tok) -> Option<ObjKind> {
    if kw(t, "GROUP") {
        Some(ObjKind::Group)
    } else if kw(t, "DATASET") {
        Some(ObjKind::Dataset)
    } else {
        None
    }
}

/// Absolute form of a path: `/`-separated, no empty or `.` parts.
fn normalize(raw: &str) -> Result<String, String> {
    let mut parts = vec![];
    for p in raw.split('/') {
        match p {
            "" | "." => {}
            ".." => return Err(format!("'..' is not allowed in paths ({raw})")),
            p => parts.push(p),
        }
    }
    Ok(format!("/{}", parts.join("/")))
}

fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        let j = (self.i + k).min(self.toks.len() - 1);
        &self.toks[j].tok
    }

    fn pos(&self) -> Pos {
        self.toks[self.i].pos
    }

    fn next(&mut self) -> Token {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    fn err_at(&self, pos: Pos, msg: impl Into<String>) -> ParseError {
        ParseError::at(self.src, pos, msg)
    }

    /// An error at the current token: "expected WHAT, found X".
    fn expected(&self, what: &str) -> ParseError {
        self.err_at(
            self.pos(),
            format!("expected {what}, found {}", self.peek().describe()),
        )
    }

    fn expect(&mut self, t: &Tok, what: &str) -> PResult<Token> {
        if self.peek() == t {
            Ok(self.next())
        } else {
            Err(self.expected(what))
        }
    }

    fn command(&mut self) -> PResult<Op> {
        let t = self.next();
        let Tok::Word(w) = &t.tok else {
            return Err(self.err_at(
                t.pos,
                format!(
                    "expected a command (CREATE, COPY, DELETE, MODIFY or RENAME), found {}",
                    t.tok.describe()
                ),
            ));
        };
        match w.to_ascii_uppercase().as_str() {
            "CREATE" => self.create(),
            "COPY" => {
                let from = self.attr_operand()?;
                let to = self.second_attr(&from)?;
                Ok(Op::CopyAttr { from, to })
            }
            "DELETE" => self.delete(),
            "RENAME" => self.rename(),
            "MODIFY" => self.modify(),
            _ => Err(self.err_at(
                t.pos,
                format!("unknown command '{w}'; expected CREATE, COPY, DELETE, MODIFY or RENAME"),
            )),
        }
    }

    /// A path or name: a word or a quoted string.
    fn operand(&mut self, what: &str) -> PResult<(String, Pos)> {
        match self.peek().clone() {
            Tok::Word(w) => Ok((w, self.next().pos)),
            Tok::Str(s) => Ok((s, self.next().pos)),
            _ => Err(self.expected(what)),
        }
    }

    fn path(&mut self, what: &str) -> PResult<(String, Pos)> {
        let (raw, pos) = self.operand(what)?;
        let p = normalize(&raw).map_err(|m| self.err_at(pos, m))?;
        Ok((p, pos))
    }

    /// An attribute name standing alone (after `GROUP /g`): no slashes.
    fn name(&mut self) -> PResult<String> {
        let (n, pos) = self.operand("an attribute name")?;
        self.check_name(&n, pos)?;
        Ok(n)
    }

    fn check_name(&self, n: &str, pos: Pos) -> PResult<()> {
        if n.contains('/') {
            return Err(self.err_at(pos, format!("attribute name '{n}' contains '/'")));
        }
        if n.is_empty() {
            return Err(self.err_at(pos, "empty attribute name"));
        }
        Ok(())
    }

    /// `/path/to/object/name` split at its last `/`.
    fn split_attr(&self, raw: &str, pos: Pos) -> PResult<AttrName> {
        let p = normalize(raw).map_err(|m| self.err_at(pos, m))?;
        if p == "/" {
            return Err(self.err_at(
                pos,
                format!("'{raw}' names no attribute; write /object/name"),
            ));
        }
        if raw.ends_with('/') {
            return Err(self.err_at(
                pos,
                format!("'{raw}' ends with '/': the attribute name is missing"),
            ));
        }
        let (obj, name) = p.rsplit_once('/').unwrap_or(("", &p));
        Ok(AttrName {
            object: if obj.is_empty() {
                "/".into()
            } else {
                obj.into()
            },
            name: name.into(),
            kind: None,
        })
    }

    /// `GROUP path name`, `DATASET path name` or `/path/to/object/name`.
    fn attr_operand(&mut self) -> PResult<AttrName> {
        if let Some(kind) = obj_kind(self.peek()) {
            self.next();
            let (object, _) = self.path("the path of a group or dataset")?;
            let name = self.name()?;
            return Ok(AttrName {
                object,
                name,
                kind: Some(kind),
            });
        }
        let (raw, pos) = self.operand("an attribute (/path/to/object/name)")?;
        self.split_attr(&raw, pos)
    }

    /// The second attribute of COPY or RENAME; a bare name (no `/`) stays
    /// on the first attribute's object.
    fn second_attr(&mut self, first: &AttrName) -> PResult<AttrName> {
        if obj_kind(self.peek()).is_some() {
            return self.attr_operand();
        }
        let (raw, pos) = self.operand("the new attribute (a name or /path/to/object/name)")?;
        if raw.contains('/') {
            self.split_attr(&raw, pos)
        } else {
            self.check_name(&raw, pos)?;
            Ok(AttrName {
                object: first.object.clone(),
                name: raw,
                kind: first.kind,
            })
        }
    }

    fn create(&mut self) -> PResult<Op> {
        if let Some(kind) = obj_kind(self.peek()) {
            self.next();
            let (path, ppos) = self.path("a path")?;
            let next = self.peek().clone();
            return match (&next, kind) {
                (Tok::Semi, ObjKind::Group) => {
                    if path == "/" {
                        return Err(self.err_at(ppos, "the root group always exists"));
                    }
                    Ok(Op::CreateGroup { path })
                }
                (Tok::LBrace, ObjKind::Dataset) => {
                    if path == "/" {
                        return Err(self.err_at(ppos, "'/' is the root group"));
                    }
                    let def = self.definition()?;
                    Ok(Op::CreateDataset { path, def })
                }
                (Tok::Semi, ObjKind::Dataset) => Err(self.expected(
                    "a definition { datatype dataspace [DATA { values }] } for the dataset",
                )),
                (Tok::LBrace, ObjKind::Group) => Err(self.expected(
                    "';' (a group has no definition; to create an attribute, name it: CREATE GROUP /g name { … })",
                )),
                _ => {
                    let name = self.name()?;
                    let def = self.definition()?;
                    Ok(Op::CreateAttr {
                        attr: AttrName {
                            object: path,
                            name,
                            kind: Some(kind),
                        },
                        def,
                    })
                }
            };
        }
        let attr = self.attr_operand()?;
        let def = self.definition()?;
        Ok(Op::CreateAttr { attr, def })
    }

    fn delete(&mut self) -> PResult<Op> {
        if let Some(kind) = obj_kind(self.peek()) {
            if matches!(self.peek_at(2), Tok::Semi) {
                self.next();
                let (path, pos) = self.path("a path")?;
                if path == "/" {
                    return Err(self.err_at(pos, "the root group cannot be deleted"));
                }
                return Ok(Op::DeleteObject { path, kind });
            }
        }
        let attr = self.attr_operand()?;
        Ok(Op::DeleteAttr { attr })
    }

    fn rename(&mut self) -> PResult<Op> {
        if let Some(kind) = obj_kind(self.peek()) {
            if matches!(self.peek_at(3), Tok::Semi) {
                self.next();
                let (from, fpos) = self.path("a path")?;
                let (to, tpos) = self.operand("the new path")?;
                let to = self.sibling(&from, fpos, &to, tpos)?;
                return Ok(Op::RenameObject { from, to, kind });
            }
            let from = self.attr_operand()?;
            let to = self.second_attr(&from)?;
            return Ok(Op::RenameAttr { from, to });
        }
        let (raw, fpos) = self.operand("the object or attribute to rename")?;
        if obj_kind(self.peek()).is_some() {
            let from = self.split_attr(&raw, fpos)?;
            let to = self.attr_operand()?;
            return Ok(Op::RenameAttr { from, to });
        }
        let from = normalize(&raw).map_err(|m| self.err_at(fpos, m))?;
        let (to, tpos) = self.operand("the new name or path")?;
        let to = self.sibling(&from, fpos, &to, tpos)?;
        Ok(Op::Rename { from, to })
    }

    /// The target of a rename: a path, or a bare name beside `from`.
    fn sibling(&self, from: &str, fpos: Pos, to: &str, tpos: Pos) -> PResult<String> {
        if from == "/" {
            return Err(self.err_at(fpos, "the root group cannot be renamed"));
        }
        let to = if to.contains('/') {
            normalize(to).map_err(|m| self.err_at(tpos, m))?
        } else if to.is_empty() || to == "." || to == ".." {
            return Err(self.err_at(tpos, format!("'{to}' is not a name")));
        } else {
            join(parent(from), to)
        };
        if to == "/" {
            return Err(self.err_at(tpos, "cannot rename to '/'"));
        }
        Ok(to)
    }

    fn modify(&mut self) -> PResult<Op> {
        let attr = self.attr_operand()?;
        let change = if kw(self.peek(), "DATA") {
            self.next();
            Modify::Data(self.values()?)
        } else if matches!(self.peek(), Tok::LBrace) {
            let next = self.peek_at(1);
            let def_like = matches!(next, Tok::LBrace | Tok::LParen)
                || ["DATATYPE", "DATASPACE", "DATA", "SCALAR", "SIMPLE"]
                    .iter()
                    .any(|k| kw(next, k))
                || is_type_word(next);
            if def_like {
                Modify::Definition(self.definition()?)
            } else {
                Modify::Data(self.values()?)
            }
        } else {
            return Err(self.expected("DATA { values } or a definition { … }"));
        };
        Ok(Op::ModifyAttr { attr, change })
    }

    /// `{ [DATATYPE] [type] [DATASPACE] [space] [DATA] [{ values }] }`.
    fn definition(&mut self) -> PResult<Definition> {
        self.expect(&Tok::LBrace, "'{' to start a definition")?;
        let mut def = Definition::default();
        let is_type = is_type_word;
        if kw(self.peek(), "DATATYPE") {
            self.next();
            def.dtype = Some(self.datatype()?);
        } else if is_type(self.peek()) {
            def.dtype = Some(self.datatype()?);
        }
        let is_space = |t: &Tok| kw(t, "SCALAR") || kw(t, "SIMPLE") || matches!(t, Tok::LParen);
        if kw(self.peek(), "DATASPACE") {
            self.next();
            def.space = Some(self.space()?);
        } else if is_space(self.peek()) {
            def.space = Some(self.space()?);
        }
        if kw(self.peek(), "DATA") {
            self.next();
            def.data = Some(self.values()?);
        } else if matches!(self.peek(), Tok::LBrace) {
            def.data = Some(self.values()?);
        }
        if !matches!(self.peek(), Tok::RBrace) {
            let mut can = vec![];
            if def.dtype.is_none() && def.space.is_none() && def.data.is_none() {
                can.push("a datatype");
            }
            if def.space.is_none() && def.data.is_none() {
                can.push("a dataspace");
            }
            if def.data.is_none() {
                can.push("DATA { values }");
            }
            can.push("'}'");
            if matches!(self.peek(), Tok::Str(_))
                || matches!(self.peek(), Tok::Word(w) if is_number(w))
            {
                return Err(self.expected(
                    "DATA { values }: values go inside their own braces, as in { { 1.5 } }",
                ));
            }
            let what = match can.len() {
                1 => can[0].to_string(),
                n => format!("{} or {}", can[..n - 1].join(", "), can[n - 1]),
            };
            return Err(self.expected(&what));
        }
        self.next();
        Ok(def)
    }

    fn datatype(&mut self) -> PResult<TypeSpec> {
        let t = self.next();
        let Tok::Word(w) = &t.tok else {
            return Err(self.err_at(
                t.pos,
                format!("expected a datatype, found {}", t.tok.describe()),
            ));
        };
        if w.eq_ignore_ascii_case("H5T_STRING") {
            return self.string_type();
        }
        match type_by_name(w) {
            Some(dtype) => Ok(TypeSpec::Fixed {
                dtype,
                space_pad: false,
            }),
            None => Err(self.err_at(
                t.pos,
                format!(
                    "unknown datatype '{w}' (known: H5T_STD_I8BE … H5T_STD_U64LE, H5T_IEEE_F32BE/LE, H5T_IEEE_F64BE/LE, H5T_NATIVE_*, H5T_STRING)"
                ),
            )),
        }
    }

    /// h5dump's `H5T_STRING { STRSIZE n; STRPAD …; CSET …; CTYPE …; }`.
    fn string_type(&mut self) -> PResult<TypeSpec> {
        self.expect(&Tok::LBrace, "'{' after H5T_STRING")?;
        let mut size: Option<Option<u32>> = None;
        let mut pad = arca::StrPad::NullPad;
        let mut cset = arca::Charset::Ascii;
        loop {
            let t = self.next();
            let key = match &t.tok {
                Tok::RBrace => break,
                Tok::Word(w) => w.to_ascii_uppercase(),
                other => {
                    return Err(self.err_at(
                        t.pos,
                        format!(
                            "expected STRSIZE, STRPAD, CSET, CTYPE or '}}', found {}",
                            other.describe()
                        ),
                    ))
                }
            };
            let vt = self.next();
            let Tok::Word(v) = &vt.tok else {
                return Err(self.err_at(
                    vt.pos,
                    format!("expected a value for {key}, found {}", vt.tok.describe()),
                ));
            };
            let v = v.to_ascii_uppercase();
            let bad = |p: &Parser, what: &str| {
                Err(p.err_at(vt.pos, format!("{key} must be {what}, not '{v}'")))
            };
            match key.as_str() {
                "STRSIZE" if v == "H5T_VARIABLE" => size = Some(None),
                "STRSIZE" => match v.parse::<u32>() {
                    Ok(n) if (1..=arca::MAX_FIXED_BYTES).contains(&n) => size = Some(Some(n)),
                    _ => {
                        return bad(
                            self,
                            &format!("a length 1..={} or H5T_VARIABLE", arca::MAX_FIXED_BYTES),
                        )
                    }
                },
                "STRPAD" => match v.as_str() {
                    "H5T_STR_NULLTERM" => pad = arca::StrPad::NullTerm,
                    "H5T_STR_NULLPAD" => pad = arca::StrPad::NullPad,
                    "H5T_STR_SPACEPAD" => pad = arca::StrPad::SpacePad,
                    _ => {
                        return bad(
                            self,
                            "H5T_STR_NULLTERM, H5T_STR_NULLPAD or H5T_STR_SPACEPAD",
                        )
                    }
                },
                "CSET" => match v.as_str() {
                    "H5T_CSET_ASCII" => cset = arca::Charset::Ascii,
                    "H5T_CSET_UTF8" => cset = arca::Charset::Utf8,
                    _ => return bad(self, "H5T_CSET_ASCII or H5T_CSET_UTF8"),
                },
                "CTYPE" => {
                    if !matches!(v.as_str(), "H5T_C_S1" | "H5T_FORTRAN_S1") {
                        return bad(self, "H5T_C_S1 or H5T_FORTRAN_S1");
                    }
                }
                _ => {
                    return Err(self.err_at(
                        t.pos,
                        format!("unknown string property '{key}' (STRSIZE, STRPAD, CSET or CTYPE)"),
                    ))
                }
            }
            // h5dump ends each property with ';'; accept it missing before '}'.
            if matches!(self.peek(), Tok::Semi) {
                self.next();
            } else if !matches!(self.peek(), Tok::RBrace) {
                return Err(self.expected("';' after the string property"));
            }
        }
        match size {
            Some(Some(len)) => Ok(TypeSpec::Fixed {
                dtype: arca::Datatype::FixedBytes { len, cset, pad },
                space_pad: pad == arca::StrPad::SpacePad,
            }),
            Some(None) => Ok(TypeSpec::VarString { cset, pad }),
            None => {
                let at = self.toks[self.i - 1].pos;
                Err(self.err_at(at, "H5T_STRING needs STRSIZE"))
            }
        }
    }

    fn space(&mut self) -> PResult<Space> {
        if kw(self.peek(), "SCALAR") {
            self.next();
            return Ok(Space::Scalar);
        }
        // h5dump writes `SIMPLE { (dims) / (max) }`; the braces may be left out.
        let mut simple = false;
        if kw(self.peek(), "SIMPLE") {
            self.next();
            if matches!(self.peek(), Tok::LBrace) {
                self.next();
                simple = true;
            } else if !matches!(self.peek(), Tok::LParen) {
                return Err(self.expected("'{' or '(' after SIMPLE"));
            }
        }
        let dims: Vec<u64> = self
            .dims(false)?
            .into_iter()
            .map(|d| d.unwrap_or(0))
            .collect();
        let mut max = None;
        if matches!(self.peek(), Tok::Word(w) if w == "/") {
            self.next();
            let pos = self.pos();
            let m = self.dims(true)?;
            if m.len() != dims.len() {
                return Err(self.err_at(
                    pos,
                    format!(
                        "the maximum dimensions have rank {}, the dimensions {}",
                        m.len(),
                        dims.len()
                    ),
                ));
            }
            if let Some((d, m)) = dims
                .iter()
                .zip(&m)
                .find(|(d, m)| m.is_some_and(|m| m < **d))
            {
                return Err(self.err_at(
                    pos,
                    format!(
                        "maximum dimension {} is below the dimension {d}",
                        m.unwrap_or(0)
                    ),
                ));
            }
            max = Some(m);
        }
        if simple {
            self.expect(&Tok::RBrace, "'}' to close SIMPLE")?;
        }
        Ok(Space::Simple { dims, max })
    }

    /// `( d1, d2, … )`; `H5S_UNLIMITED` (as `None`) only if `unlimited`.
    fn dims(&mut self, unlimited: bool) -> PResult<Vec<Option<u64>>> {
        self.expect(&Tok::LParen, "a dataspace: SCALAR or ( d1, d2, … )")?;
        let mut out = vec![];
        loop {
            let t = self.next();
            match &t.tok {
                Tok::RParen if out.is_empty() => return Err(self.err_at(
                    t.pos,
                    "a dataspace needs at least one dimension (write SCALAR for a single value)",
                )),
                Tok::Word(w) if unlimited && w.eq_ignore_ascii_case("H5S_UNLIMITED") => {
                    out.push(None)
                }
                Tok::Word(w) => match w.parse::<u64>() {
                    Ok(n) => out.push(Some(n)),
                    Err(_) => {
                        return Err(self.err_at(
                            t.pos,
                            format!("expected a dimension size (a whole number), found '{w}'"),
                        ))
                    }
                },
                other => {
                    return Err(self.err_at(
                        t.pos,
                        format!("expected a dimension size, found {}", other.describe()),
                    ))
                }
            }
            let t = self.next();
            match t.tok {
                Tok::Comma => {}
                Tok::RParen => break,
                other => {
                    return Err(self.err_at(
                        t.pos,
                        format!("expected ',' or ')', found {}", other.describe()),
                    ))
                }
            }
        }
        if out.len() > arca::MAX_RANK {
            return Err(self.err_at(
                self.toks[self.i - 1].pos,
                format!("rank {} exceeds the maximum {}", out.len(), arca::MAX_RANK),
            ));
        }
        Ok(out)
    }

    /// `{ v1, v2, … }`: numbers or quoted strings.
    fn values(&mut self) -> PResult<Vec<Value>> {
        self.expect(&Tok::LBrace, "'{' to start the values")?;
        let mut out = vec![];
        loop {
            let t = self.next();
            match &t.tok {
                Tok::RBrace if out.is_empty() => {
                    return Err(self.err_at(t.pos, "DATA needs at least one value"))
                }
                Tok::Word(w) if is_number(w) => out.push(Value::Number(w.clone())),
                Tok::Str(s) => out.push(Value::Str(s.clone())),
                other => {
                    return Err(self.err_at(
                        t.pos,
                        format!(
                            "expected a number or a quoted string, found {}",
                            other.describe()
                        ),
                    ))
                }
            }
            let t = self.next();
            match t.tok {
                Tok::Comma => {}
                Tok::RBrace => break,
                other => {
                    return Err(self.err_at(
                        t.pos,
                        format!(
                            "expected ',' or '}}' after a value, found {}",
                            other.describe()
                        ),
                    ))
                }
            }
        }
        Ok(out)
    }
}
