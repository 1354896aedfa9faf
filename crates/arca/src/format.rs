//! On-disk structures, one module each, every one opening with its byte layout.

pub(crate) mod attribute;
pub(crate) mod btree;
pub(crate) mod codec;
pub(crate) mod datatype;
pub(crate) mod object_header;
pub(crate) mod superblock;
