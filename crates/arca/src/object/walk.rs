//! A walk over everything below a group, one link at a time, as an
//! iterator that holds only the groups it is inside (their links), never
//! a list of every path; `Group::visit` and `visit_links` go through it.

use super::group::{links_of, Group};
use super::handle::{lock, FileHandle};
use super::links::{Link, Met};
use super::lookup::get_link;
use super::session::Session;
use crate::error::{Error, Result};
use crate::format::link::{self as link_fmt, Target};
use crate::format::object_header::ObjectKind;

/// The order a walk lists each group's members in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkOrder {
    /// By name (bytes), in every group: the order HDF5 and h5py visit in.
    Name,
    /// Each group's own order: by name, or by creation where the group
    /// tracks it (as [`Group::visit`] goes).
    Group,
}

/// One link met by a [`Walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkStep {
    /// The path from the walk's group, `a/b/c`.
    pub path: String,
    /// What the link leads to.
    pub link: Link,
    /// Whether this is the first hard link to its object the walk met
    /// (false for soft and external links): an object with several names
    /// is walked into under the first one only.
    pub first: bool,
}

/// A walk over every link below a group, depth first, parents before
/// their members, following hard links only; from [`Group::walk`].
///
/// It holds the links of the groups it is inside, so its memory follows
/// the depth and width of the tree, not the number of objects. Links may
/// change while it runs: a member removed before the walk reaches it is
/// skipped, a group removed is left, members added to a group the walk is
/// already inside may be missed.
pub struct Walk {
    file: FileHandle,
    order: WalkOrder,
    met: Met,
    stack: Vec<Level>,
    /// The session's links epoch when the stack was last known current.
    epoch: u64,
}

/// A group the walk is inside.
struct Level {
    addr: u64,
    /// Its name in the group above (empty for the walk's own group).
    name: String,
    /// Its path from the walk's group.
    prefix: String,
    /// Its links not yet taken.
    members: std::vec::IntoIter<(String, link_fmt::Link)>,
    /// Whether links changed since `members` was read: each is read
    /// again before it is taken.
    stale: bool,
}

impl Group {
    /// Call `f(relative path, kind)` for every object below this group,
    /// depth first in each group's order, following hard links only and
    /// visiting each object once (by the first name met), as h5py does;
    /// [`Group::walk`] one step at a time.
    ///
    /// ```
    /// use arca::File;
    /// let f = File::in_memory().unwrap();
    /// f.root().create_group("a/b").unwrap();
    /// let mut seen = vec![];
    /// f.root().visit(&mut |p, _| { seen.push(p.to_string()); Ok(()) }).unwrap();
    /// assert_eq!(seen, ["a", "a/b"]);
    /// ```
    ///
    /// # Errors
    /// Errors from `f` or from damage met on the way.
    pub fn visit(&self, f: &mut dyn FnMut(&str, ObjectKind) -> Result<()>) -> Result<()> {
        for step in self.walk(WalkOrder::Group)? {
            if let WalkStep {
                path,
                link: Link::Hard(kind),
                first: true,
            } = step?
            {
                f(&path, kind)?;
            }
        }
        Ok(())
    }

    /// Call `f(relative path, link)` for every link below this group, soft
    /// and external ones included, depth first in each group's order; the
    /// members of a group with several names are listed under the first
    /// name met.
    ///
    /// # Errors
    /// Errors from `f` or from damage met on the way.
    pub fn visit_links(&self, f: &mut dyn FnMut(&str, &Link) -> Result<()>) -> Result<()> {
        for step in self.walk(WalkOrder::Group)? {
            let step = step?;
            f(&step.path, &step.link)?;
        }
        Ok(())
    }

    /// Walk every link below this group, depth first, each group's
    /// members in `order`, one [`WalkStep`] at a time.
    ///
    /// ```
    /// use arca::{File, Link, WalkOrder};
    /// let f = File::in_memory().unwrap();
    /// f.root().create_group("b/c").unwrap();
    /// f.root().create_group("a").unwrap();
    /// let paths: Vec<String> = f.root().walk(WalkOrder::Name).unwrap()
    ///     .map(|s| s.unwrap().path).collect();
    /// assert_eq!(paths, ["a", "b", "b/c"]);
    /// ```
    ///
    /// # Errors
    /// Damage met on the way, as an `Err` item (the walk then ends);
    /// this call fails only if the group's own links cannot be read.
    pub fn walk(&self, order: WalkOrder) -> Result<Walk> {
        let mut g = lock(&self.file)?;
        let members = members_in(&mut g, self.addr, order)?;
        let met = Met::new(&mut g, self.addr)?;
        Ok(Walk {
            file: self.file.clone(),
            order,
            met,
            stack: vec![Level {
                addr: self.addr,
                name: String::new(),
                prefix: String::new(),
                members: members.into_iter(),
                stale: false,
            }],
            epoch: g.links_epoch(),
        })
    }
}

/// The links of the group at `addr`, in `order`.
fn members_in(
    g: &mut Session,
    addr: u64,
    order: WalkOrder,
) -> Result<Vec<(String, link_fmt::Link)>> {
    let mut ms = links_of(&mut g.st, addr)?;
    if order == WalkOrder::Name {
        // Already so unless the group lists members by creation.
        if ms.windows(2).any(|w| w[0].0 > w[1].0) {
            ms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        }
    }
    Ok(ms)
}

/// A group reached again from inside itself through links that count one
/// name for it: the links loop.
fn loops_back(addr: u64) -> Error {
    Error::corrupt(
        "group link",
        addr,
        "a group is reached from inside itself: links form a cycle",
    )
}

impl Walk {
    fn step(&mut self) -> Result<Option<WalkStep>> {
        let file = self.file.clone();
        let mut g = lock(&file)?;
        if g.links_epoch() != self.epoch {
            self.links_changed(&mut g)?;
        }
        loop {
            let Some(level) = self.stack.last_mut() else {
                return Ok(None);
            };
            let Some((name, mut l)) = level.members.next() else {
                self.stack.pop();
                continue;
            };
            if level.stale {
                match get_link(&mut g.st, level.addr, &name)? {
                    Some(fresh) => l = fresh,
                    None => continue,
                }
            }
            let path = if level.prefix.is_empty() {
                name.clone()
            } else {
                format!("{}/{name}", level.prefix)
            };
            let link = Link::from_target(&l.target);
            let Target::Hard { kind, addr } = l.target else {
                return Ok(Some(WalkStep {
                    path,
                    link,
                    first: false,
                }));
            };
            let first = self.met.arrive(addr)?;
            if first && kind == ObjectKind::Group {
                if self.stack.iter().any(|lv| lv.addr == addr) {
                    return Err(loops_back(addr));
                }
                let members = members_in(&mut g, addr, self.order)?;
                self.stack.push(Level {
                    addr,
                    name,
                    prefix: path.clone(),
                    members: members.into_iter(),
                    stale: false,
                });
            }
            return Ok(Some(WalkStep { path, link, first }));
        }
    }

    /// Links changed since the last step: keep the groups the walk is
    /// inside only while each is still a group under the same name in
    /// the one above, and read their remaining links again as taken.
    fn links_changed(&mut self, g: &mut Session) -> Result<()> {
        self.met.links_changed(g)?;
        let mut keep = self.stack.len().min(1);
        for i in 1..self.stack.len() {
            let (parent, level) = (self.stack[i - 1].addr, &self.stack[i]);
            let same = matches!(
                get_link(&mut g.st, parent, &level.name)?,
                Some(link_fmt::Link { target: Target::Hard { kind: ObjectKind::Group, addr }, .. })
                    if addr == level.addr
            );
            if !same {
                break;
            }
            keep = i + 1;
        }
        self.stack.truncate(keep);
        for level in &mut self.stack {
            level.stale = true;
        }
        self.epoch = g.links_epoch();
        Ok(())
    }
}

impl Iterator for Walk {
    type Item = Result<WalkStep>;

    fn next(&mut self) -> Option<Result<WalkStep>> {
        match self.step() {
            Ok(s) => s.map(Ok),
            Err(e) => {
                // Damage ends the walk: a caller going on gets `None`.
                self.stack.clear();
                Some(Err(e))
            }
        }
    }
}
