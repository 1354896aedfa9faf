//! Applying commands to a file.
//!
//! Each command is first checked against the file as it is — paths
//! resolved, existence checked, values converted and counted — producing
//! an [`Action`] that holds everything needed; only then is the file
//! touched. So a command that fails its checks changes nothing, whatever
//! the atomicity level.

use std::path::Path;

use arca::{AttrValue, Attributes, DatasetOptions, Datatype, File, Group, Object, Selection};

use crate::ast::{AttrName, Command, Definition, Modify, ObjKind, Op, Space, TypeSpec, Value};
use crate::error::{CommandError, EditError};
use crate::types::{encode, DEFAULT_TYPE};
use crate::{txn, Atomic};

/// What a successful session did.
///
/// ```
/// use arca_edit::{run, Atomic};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("r.arca");
/// arca::File::create(&path).unwrap().close().unwrap();
/// let r = run(&path, "CREATE GROUP /g; CREATE /g/n {H5T_STD_U8LE DATA {7}};", Atomic::Yes).unwrap();
/// assert_eq!(r.applied, 2);
/// assert_eq!(r.done[1], "created attribute /g/n");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// Number of commands applied.
    pub applied: usize,
    /// One line per applied command saying what it did.
    pub done: Vec<String>,
}

/// Why one command failed.
enum Fail {
    /// The command does not fit the file (exit 3).
    Semantic(String),
    /// The storage layer failed (I/O, damage, lock).
    Storage(arca::Error),
}

impl From<String> for Fail {
    fn from(m: String) -> Self {
        Fail::Semantic(m)
    }
}

impl From<&str> for Fail {
    fn from(m: &str) -> Self {
        Fail::Semantic(m.to_string())
    }
}

/// Sort a storage error: ones caused by the command are semantic.
fn classify(e: arca::Error) -> Fail {
    match e {
        arca::Error::NotFound(_)
        | arca::Error::AlreadyExists(_)
        | arca::Error::InvalidArgument(_)
        | arca::Error::Unsupported(_) => Fail::Semantic(e.to_string()),
        e => Fail::Storage(e),
    }
}

type FResult<T> = Result<T, Fail>;

/// A checked command, ready to apply.
enum Action {
    CreateAttr {
        owner: String,
        attrs: Attributes,
        name: String,
        value: AttrValue,
    },
    ReplaceAttr {
        owner: String,
        attrs: Attributes,
        name: String,
        value: AttrValue,
    },
    DeleteAttr {
        owner: String,
        attrs: Attributes,
        name: String,
    },
    RenameAttr {
        owner: String,
        attrs: Attributes,
        from: String,
        to: String,
    },
    CreateGroup {
        path: String,
    },
    CreateDataset {
        path: String,
        opts: DatasetOptions,
        shape: Vec<u64>,
        data: Option<Vec<u8>>,
    },
    DeleteObject {
        path: String,
    },
    RenameObject {
        from: String,
        to: String,
    },
}

fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

fn last(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The kind a command may name the object by (none for a committed datatype).
fn kind_of(o: &Object) -> Option<ObjKind> {
    match o {
        Object::Group(_) => Some(ObjKind::Group),
        Object::Dataset(_) => Some(ObjKind::Dataset),
        Object::Datatype(_) => None,
    }
}

/// What the object is called in messages.
fn kind_word(o: &Object) -> String {
    kind_of(o).map_or("committed datatype".into(), |k| k.to_string())
}

/// The object at `path`, or `None` if nothing is there.
fn lookup(root: &Group, path: &str) -> FResult<Option<Object>> {
    match root.object(path) {
        Ok(o) => Ok(Some(o)),
        Err(arca::Error::NotFound(_)) => Ok(None),
        Err(e) => Err(classify(e)),
    }
}

/// The object at `path`, which must be of `kind` if one is given.
fn object(root: &Group, path: &str, kind: Option<ObjKind>) -> FResult<Object> {
    let o = lookup(root, path)?.ok_or_else(|| match kind {
        Some(k) => format!("no {k} {path}"),
        None => format!("no group or dataset {path}"),
    })?;
    if let Some(k) = kind {
        if kind_of(&o) != Some(k) {
            return Err(format!("{path} is a {}, not a {k}", kind_word(&o)).into());
        }
    }
    Ok(o)
}

fn attrs_of(root: &Group, a: &AttrName) -> FResult<Attributes> {
    Ok(object(root, &a.object, a.kind)?.attrs())
}

fn has_attr(attrs: &Attributes, name: &str) -> FResult<bool> {
    attrs.contains(name).map_err(classify)
}

/// Every ancestor of `path` that exists must be a group.
fn check_ancestors(root: &Group, path: &str) -> FResult<()> {
    let mut prefix = String::new();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    for p in &parts[..parts.len().saturating_sub(1)] {
        prefix.push('/');
        prefix.push_str(p);
        match lookup(root, &prefix)? {
            Some(Object::Group(_)) => {}
            Some(o) => {
                return Err(
                    format!("{prefix} is a {}, so it cannot hold {path}", kind_word(&o)).into(),
                )
            }
            None => break,
        }
    }
    Ok(())
}

fn count(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
}

/// Type, shape and bytes for a definition. `base` (MODIFY) supplies the
/// type and shape the definition leaves out.
fn build(
    def: &Definition,
    base: Option<&AttrValue>,
    what: &str,
) -> FResult<(Datatype, Vec<u64>, Option<Vec<u8>>)> {
    let values = def.data.as_deref();
    let all_strings = values.is_some_and(|v| v.iter().all(|x| matches!(x, Value::Str(_))));
    let spec = match (def.dtype.clone(), base) {
        (Some(t), _) => t,
        (None, Some(b)) => TypeSpec::Fixed {
            dtype: b.dtype.clone(),
            space_pad: false,
        },
        // Quoted values with no type: a string as long as the longest.
        (None, None) if all_strings => TypeSpec::VarString {
            cset: arca::Charset::Ascii,
            pad: arca::StrPad::NullPad,
        },
        (None, None) => TypeSpec::Fixed {
            dtype: DEFAULT_TYPE,
            space_pad: false,
        },
    };
    let (dtype, space_pad) = match spec {
        TypeSpec::Fixed { dtype, space_pad } => (dtype, space_pad),
        TypeSpec::VarString { cset, pad } => {
            let Some(values) = values else {
                return Err(format!(
                    "{what} of type H5T_STRING {{ STRSIZE H5T_VARIABLE; }} needs DATA to size its strings"
                )
                .into());
            };
            let longest = values
                .iter()
                .map(|v| match v {
                    Value::Str(s) => s.len(),
                    Value::Number(_) => 0,
                })
                .max()
                .unwrap_or(0)
                .max(1);
            if longest > arca::MAX_FIXED_BYTES as usize {
                return Err(format!(
                    "a string of {longest} bytes exceeds the longest string element ({} bytes)",
                    arca::MAX_FIXED_BYTES
                )
                .into());
            }
            (
                Datatype::FixedBytes {
                    len: longest as u32,
                    cset,
                    pad,
                },
                pad == arca::StrPad::SpacePad,
            )
        }
    };
    let (shape, max) = match (&def.space, base) {
        (Some(Space::Simple { dims, max }), _) => (dims.clone(), max.clone()),
        (Some(Space::Scalar), _) => (vec![], None),
        (None, Some(b)) => (b.shape.clone(), None),
        (None, None) => (vec![], None),
    };
    if let Some(max) = &max {
        if what.starts_with("attribute") && max.iter().zip(&shape).any(|(m, d)| *m != Some(*d)) {
            return Err(
                "an attribute cannot grow: its maximum dimensions must equal its dimensions".into(),
            );
        }
    }
    let data = match values {
        None => None,
        Some(values) => {
            let n = count(&shape).ok_or("the dataspace holds more elements than can be counted")?;
            if values.len() as u64 != n {
                let space = if shape.is_empty() {
                    "SCALAR".to_string()
                } else {
                    format!("{shape:?}")
                };
                return Err(format!(
                    "DATA has {} value{} but the dataspace {space} holds {n}{}",
                    values.len(),
                    if values.len() == 1 { "" } else { "s" },
                    if shape.is_empty() && values.len() > 1 {
                        format!(" (give a dataspace, e.g. ({}))", values.len())
                    } else {
                        String::new()
                    }
                )
                .into());
            }
            Some(encode(&dtype, values, space_pad)?)
        }
    };
    Ok((dtype, shape, data))
}

fn attr_value(def: &Definition, base: Option<&AttrValue>) -> FResult<AttrValue> {
    let (dtype, shape, data) = build(def, base, "attribute")?;
    let data = data.ok_or("an attribute needs DATA { values }")?;
    AttrValue::new(dtype, &shape, data).map_err(classify)
}

/// Check one command against the file and say what applying it means.
fn plan(file: &File, op: &Op) -> FResult<Action> {
    let root = file.root();
    Ok(match op {
        Op::CreateAttr { attr, def } => {
            let attrs = attrs_of(&root, attr)?;
            if has_attr(&attrs, &attr.name)? {
                return Err(format!("attribute {attr} exists already").into());
            }
            Action::CreateAttr {
                owner: attr.object.clone(),
                attrs,
                name: attr.name.clone(),
                value: attr_value(def, None)?,
            }
        }
        Op::CopyAttr { from, to } => {
            let src = attrs_of(&root, from)?;
            if !has_attr(&src, &from.name)? {
                return Err(format!("no attribute {from}").into());
            }
            let value = src.get(&from.name).map_err(classify)?;
            let attrs = attrs_of(&root, to)?;
            if has_attr(&attrs, &to.name)? {
                return Err(format!("attribute {to} exists already").into());
            }
            Action::CreateAttr {
                owner: to.object.clone(),
                attrs,
                name: to.name.clone(),
                value,
            }
        }
        Op::DeleteAttr { attr } => {
            let attrs = attrs_of(&root, attr)?;
            if !has_attr(&attrs, &attr.name)? {
                return Err(format!("no attribute {attr}").into());
            }
            Action::DeleteAttr {
                owner: attr.object.clone(),
                attrs,
                name: attr.name.clone(),
            }
        }
        Op::RenameAttr { from, to } => plan_rename_attr(&root, from, to)?,
        Op::ModifyAttr { attr, change } => {
            let attrs = attrs_of(&root, attr)?;
            if !has_attr(&attrs, &attr.name)? {
                return Err(format!("no attribute {attr}").into());
            }
            let old = attrs.get(&attr.name).map_err(classify)?;
            let value = match change {
                Modify::Data(values) => attr_value(
                    &Definition {
                        data: Some(values.clone()),
                        ..Definition::default()
                    },
                    Some(&old),
                )?,
                Modify::Definition(def) => attr_value(def, Some(&old))?,
            };
            Action::ReplaceAttr {
                owner: attr.object.clone(),
                attrs,
                name: attr.name.clone(),
                value,
            }
        }
        Op::CreateGroup { path } => {
            check_ancestors(&root, path)?;
            if lookup(&root, path)?.is_some() {
                return Err(format!("{path} exists already").into());
            }
            Action::CreateGroup { path: path.clone() }
        }
        Op::CreateDataset { path, def } => {
            check_ancestors(&root, path)?;
            if lookup(&root, path)?.is_some() {
                return Err(format!("{path} exists already").into());
            }
            let (dtype, shape, data) = build(def, None, "dataset")?;
            let mut opts = DatasetOptions::new(dtype, &shape);
            if let Some(Space::Simple {
                max: Some(max),
                dims,
            }) = &def.space
            {
                if max.iter().zip(dims).any(|(m, d)| *m != Some(*d)) {
                    opts = opts.maxshape(max);
                }
            }
            // Rehearse on a scratch file so options the storage layer
            // refuses fail here, before the real file is touched.
            let scratch = File::in_memory().map_err(Fail::Storage)?;
            let ds = scratch
                .root()
                .create_dataset("d", &opts)
                .map_err(classify)?;
            if let Some(bytes) = &data {
                ds.write_bytes(&Selection::all(&shape), bytes)
                    .map_err(classify)?;
            }
            Action::CreateDataset {
                path: path.clone(),
                opts,
                shape,
                data,
            }
        }
        Op::DeleteObject { path, kind } => {
            object(&root, path, Some(*kind))?;
            Action::DeleteObject { path: path.clone() }
        }
        Op::RenameObject { from, to, kind } => plan_rename_object(&root, from, to, Some(*kind))?,
        Op::Rename { from, to } => {
            let is_object = lookup(&root, from)?.is_some();
            let owner = parent(from);
            let attr = AttrName {
                object: owner.to_string(),
                name: last(from).to_string(),
                kind: None,
            };
            let is_attr = match lookup(&root, owner)? {
                Some(o) => has_attr(&o.attrs(), &attr.name)?,
                None => false,
            };
            match (is_object, is_attr) {
                (true, true) => {
                    return Err(format!(
                        "{from} is both an object and an attribute of {owner}; write RENAME GROUP|DATASET {from} {to}; for the object, or RENAME GROUP|DATASET {owner} {} {}; for the attribute",
                        attr.name,
                        last(to)
                    )
                    .into())
                }
                (true, false) => plan_rename_object(&root, from, to, None)?,
                (false, true) => {
                    let to_attr = AttrName {
                        object: parent(to).to_string(),
                        name: last(to).to_string(),
                        kind: None,
                    };
                    plan_rename_attr(&root, &attr, &to_attr)?
                }
                (false, false) => {
                    return Err(format!(
                        "nothing to rename: no object {from}, and no attribute {} on {owner}",
                        attr.name
                    )
                    .into())
                }
            }
        }
    })
}

fn plan_rename_attr(root: &Group, from: &AttrName, to: &AttrName) -> FResult<Action> {
    let attrs = attrs_of(root, from)?;
    if !has_attr(&attrs, &from.name)? {
        return Err(format!("no attribute {from}").into());
    }
    if to.object != from.object {
        return Err(format!(
            "RENAME keeps an attribute on its object ({}); to move it to {}, COPY it and DELETE the original",
            from.object, to.object
        )
        .into());
    }
    if let Some(k) = to.kind {
        object(root, &to.object, Some(k))?;
    }
    if has_attr(&attrs, &to.name)? {
        return Err(format!("attribute {to} exists already").into());
    }
    Ok(Action::RenameAttr {
        owner: from.object.clone(),
        attrs,
        from: from.name.clone(),
        to: to.name.clone(),
    })
}

fn plan_rename_object(
    root: &Group,
    from: &str,
    to: &str,
    kind: Option<ObjKind>,
) -> FResult<Action> {
    object(root, from, kind)?;
    if lookup(root, to)?.is_some() {
        return Err(format!("{to} exists already").into());
    }
    let dir = parent(to);
    match lookup(root, dir)? {
        Some(Object::Group(_)) => {}
        Some(o) => return Err(format!("{dir} is a {}, not a group", kind_word(&o)).into()),
        None => return Err(format!("no group {dir} to move {from} into").into()),
    }
    if to.starts_with(&format!("{from}/")) {
        return Err(format!("cannot move {from} into itself").into());
    }
    Ok(Action::RenameObject {
        from: from.to_string(),
        to: to.to_string(),
    })
}

/// Make the change; returns a line for the report.
fn apply(file: &File, action: Action) -> arca::Result<String> {
    let root = file.root();
    Ok(match action {
        Action::CreateAttr {
            owner,
            attrs,
            name,
            value,
        } => {
            attrs.create(&name, &value)?;
            format!("created attribute {}", full(&owner, &name))
        }
        Action::ReplaceAttr {
            owner,
            attrs,
            name,
            value,
        } => {
            attrs.set(&name, &value)?;
            format!("modified attribute {}", full(&owner, &name))
        }
        Action::DeleteAttr { owner, attrs, name } => {
            attrs.delete(&name)?;
            format!("deleted attribute {}", full(&owner, &name))
        }
        Action::RenameAttr {
            owner,
            attrs,
            from,
            to,
        } => {
            attrs.rename(&from, &to)?;
            format!(
                "renamed attribute {} to {}",
                full(&owner, &from),
                full(&owner, &to)
            )
        }
        Action::CreateGroup { path } => {
            root.create_group(&path)?;
            format!("created group {path}")
        }
        Action::CreateDataset {
            path,
            opts,
            shape,
            data,
        } => {
            let ds = root.create_dataset(&path, &opts)?;
            if let Some(bytes) = data {
                ds.write_bytes(&Selection::all(&shape), &bytes)?;
            }
            format!("created dataset {path}")
        }
        Action::DeleteObject { path } => {
            root.delete(&path)?;
            format!("deleted {path}")
        }
        Action::RenameObject { from, to } => {
            root.rename(&from, &to)?;
            format!("renamed {from} to {to}")
        }
    })
}

/// An attribute's full name, as commands write it.
fn full(owner: &str, name: &str) -> String {
    AttrName {
        object: owner.to_string(),
        name: name.to_string(),
        kind: None,
    }
    .to_string()
}

fn step(file: &File, cmd: &Command) -> FResult<String> {
    let action = plan(file, &cmd.op)?;
    let line = apply(file, action).map_err(classify)?;
    Ok(match &cmd.op {
        Op::CopyAttr { from, to } => format!("copied attribute {from} to {to}"),
        _ => line,
    })
}

/// Error text that stands in for a failed command inside a transaction.
const ABORT: &str = "arca-edit: command failed";

fn command_error(
    cmd: &Command,
    index: usize,
    fail: Fail,
    kept: usize,
    atomic: Atomic,
) -> EditError {
    match fail {
        Fail::Semantic(message) => EditError::Command(CommandError {
            index: index + 1,
            line: cmd.line,
            text: cmd.text.clone(),
            message,
            kept,
            atomic,
        }),
        Fail::Storage(e) => {
            let m = format!(
                "command {} (line {}) `{}`: {e}",
                index + 1,
                cmd.line,
                cmd.text
            );
            EditError::from_arca(&m, e)
        }
    }
}

/// Apply `cmds` to the file at `path` at the given atomicity level.
/// Apply `cmds`; `progress` hears the commands done of the total after
/// each one.
pub(crate) fn run_commands(
    path: &Path,
    cmds: &[Command],
    atomic: Atomic,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report, EditError> {
    let total = cmds.len() as u64;
    let file = txn::open(path, atomic)
        .map_err(|e| EditError::from_arca(&format!("opening {}", path.display()), e))?;
    let mut report = Report::default();
    let result = match atomic {
        Atomic::Yes => {
            let mut failure = None;
            let done = &mut report.done;
            let r = txn::transaction(&file, |f| {
                for (i, c) in cmds.iter().enumerate() {
                    match step(f, c) {
                        Ok(line) => {
                            done.push(line);
                            progress(i as u64 + 1, total);
                        }
                        Err(e) => {
                            failure = Some((i, e));
                            return Err(arca::Error::InvalidArgument(ABORT.into()));
                        }
                    }
                }
                Ok(())
            });
            match (r, failure) {
                (Ok(()), _) => Ok(()),
                (Err(e), Some((i, fail))) if e.to_string().contains(ABORT) => {
                    Err(command_error(&cmds[i], i, fail, 0, atomic))
                }
                (Err(e), _) => Err(EditError::from_arca("committing the session", e)),
            }
        }
        Atomic::Inc => {
            let mut out = Ok(());
            for (i, c) in cmds.iter().enumerate() {
                let mut failure = None;
                let r = txn::transaction(&file, |f| {
                    step(f, c).map_err(|e| {
                        failure = Some(e);
                        arca::Error::InvalidArgument(ABORT.into())
                    })
                });
                match (r, failure) {
                    (Ok(line), _) => {
                        report.done.push(line);
                        progress(i as u64 + 1, total);
                    }
                    (Err(e), Some(fail)) if e.to_string().contains(ABORT) => {
                        out = Err(command_error(c, i, fail, i, atomic));
                        break;
                    }
                    (Err(e), _) => {
                        let m = format!("command {} (line {}) `{}`", i + 1, c.line, c.text);
                        out = Err(EditError::from_arca(&m, e));
                        break;
                    }
                }
            }
            out
        }
        Atomic::No => {
            let mut out = Ok(());
            for (i, c) in cmds.iter().enumerate() {
                match step(&file, c) {
                    Ok(line) => {
                        report.done.push(line);
                        progress(i as u64 + 1, total);
                    }
                    Err(fail) => {
                        out = Err(command_error(c, i, fail, i, atomic));
                        break;
                    }
                }
            }
            // Earlier commands stay applied, as h5edit does without backup.
            let committed =
                txn::commit(&file).map_err(|e| EditError::from_arca("writing the file", e));
            out.and(committed)
        }
    };
    report.applied = report.done.len();
    let closed = file
        .close()
        .map_err(|e| EditError::from_arca("closing the file", e));
    result?;
    closed?;
    Ok(report)
}
