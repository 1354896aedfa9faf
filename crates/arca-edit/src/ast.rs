//! The parsed form of commands.

use arca::Datatype;

/// One parsed command with where it came from.
///
/// ```
/// use arca_edit::{parse, Op};
/// let cmds = parse("DELETE /g/units;  # drop it").unwrap();
/// assert_eq!(cmds[0].text, "DELETE /g/units;");
/// assert!(matches!(&cmds[0].op, Op::DeleteAttr { attr } if attr.name == "units"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// What to do.
    pub op: Op,
    /// 1-based line the command starts on.
    pub line: usize,
    /// 1-based column the command starts at.
    pub column: usize,
    /// The command's source text, from its keyword to its `;`.
    pub text: String,
}

/// Whether a path was marked `GROUP` or `DATASET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjKind {
    /// Marked `GROUP`.
    Group,
    /// Marked `DATASET`.
    Dataset,
}

impl std::fmt::Display for ObjKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ObjKind::Group => "group",
            ObjKind::Dataset => "dataset",
        })
    }
}

/// An attribute: the object it is attached to and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrName {
    /// Absolute, normalised path of the object (`/` for the root).
    pub object: String,
    /// The attribute's name.
    pub name: String,
    /// `GROUP` or `DATASET` if the command said which the object must be.
    pub kind: Option<ObjKind>,
}

impl std::fmt::Display for AttrName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.object == "/" {
            write!(f, "/{}", self.name)
        } else {
            write!(f, "{}/{}", self.object, self.name)
        }
    }
}

/// A datatype as written in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeSpec {
    /// A numeric type or a fixed-length string.
    Fixed {
        /// The type stored.
        dtype: Datatype,
        /// Strings only: pad with spaces (`STRPAD H5T_STR_SPACEPAD`) rather than NULs.
        space_pad: bool,
    },
    /// `H5T_STRING { STRSIZE H5T_VARIABLE; }`: stored as a fixed-length
    /// string as long as the longest value.
    VarString {
        /// The character set written (`CSET`).
        cset: arca::Charset,
        /// The padding written (`STRPAD`); spaces fill the rest when it is
        /// `SpacePad`, NULs otherwise.
        pad: arca::StrPad,
    },
}

/// A dataspace as written in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Space {
    /// `SCALAR`: one element.
    Scalar,
    /// `( d1, d2, … )`, or h5dump's `SIMPLE { ( dims ) / ( maxdims ) }`
    /// (`None` in `max` is `H5S_UNLIMITED`).
    Simple {
        /// Current extent.
        dims: Vec<u64>,
        /// Largest extent, if given.
        max: Option<Vec<Option<u64>>>,
    },
}

impl Space {
    /// The shape arca stores (empty for a scalar).
    pub fn shape(&self) -> Vec<u64> {
        match self {
            Space::Scalar => vec![],
            Space::Simple { dims, .. } => dims.clone(),
        }
    }
}

/// One element of a `DATA { … }` list, kept as written so range errors can
/// quote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A number literal (integer or floating point, `inf`, `nan`).
    Number(String),
    /// A quoted string.
    Str(String),
}

/// `{ [type] [dataspace] [DATA] { values } }`; parts left out take defaults.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Definition {
    /// The datatype, if given.
    pub dtype: Option<TypeSpec>,
    /// The dataspace, if given.
    pub space: Option<Space>,
    /// The values, if given.
    pub data: Option<Vec<Value>>,
}

/// What `MODIFY` replaces.
#[derive(Debug, Clone, PartialEq)]
pub enum Modify {
    /// New values; type and shape stay.
    Data(Vec<Value>),
    /// A full definition; omitted parts keep the attribute's type or shape.
    Definition(Definition),
}

/// A command.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `CREATE attr { … }`.
    CreateAttr {
        /// The new attribute.
        attr: AttrName,
        /// Its type, shape and values.
        def: Definition,
    },
    /// `COPY attr attr`.
    CopyAttr {
        /// Source attribute.
        from: AttrName,
        /// New attribute.
        to: AttrName,
    },
    /// `DELETE attr`.
    DeleteAttr {
        /// The attribute.
        attr: AttrName,
    },
    /// `RENAME attr name` with the attribute explicitly named
    /// (`GROUP`/`DATASET` form, or a bare new name).
    RenameAttr {
        /// The attribute.
        from: AttrName,
        /// Its new name (on the same object).
        to: AttrName,
    },
    /// `MODIFY attr …`.
    ModifyAttr {
        /// The attribute.
        attr: AttrName,
        /// What changes.
        change: Modify,
    },
    /// `CREATE GROUP path;`.
    CreateGroup {
        /// Absolute path.
        path: String,
    },
    /// `CREATE DATASET path { type dataspace [DATA { … }] };`.
    CreateDataset {
        /// Absolute path.
        path: String,
        /// Type, shape and optional initial values.
        def: Definition,
    },
    /// `DELETE GROUP path;` / `DELETE DATASET path;`.
    DeleteObject {
        /// Absolute path.
        path: String,
        /// What the object must be.
        kind: ObjKind,
    },
    /// `RENAME GROUP a b;` / `RENAME DATASET a b;`.
    RenameObject {
        /// Absolute path.
        from: String,
        /// New absolute path.
        to: String,
        /// What the object must be.
        kind: ObjKind,
    },
    /// `RENAME /a/b /a/c;`: an object if `/a/b` is one, otherwise the
    /// attribute `b` of `/a` (decided when the command runs).
    Rename {
        /// Absolute path of the object or attribute.
        from: String,
        /// New absolute path.
        to: String,
    },
}
