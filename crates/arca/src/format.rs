//! On-disk structures, one module each, every one opening with its byte
//! layout. Every byte of a file is encoded and decoded here; each decoder
//! checks its fields against each other and against the file, since a file
//! can be wrong behind valid checksums.
//!
//! `codec`, `page` and `blob` are byte layouts with no I/O of their own:
//! the pager and the store use them, so they sit below every other layer.
//!
//! The files here use one another without a cycle: what two structures
//! share sits in the module it describes (the dataspace in `shape`, the
//! unfiltered chunk mask in `filter_pipeline`, the largest chunk in
//! `chunk_index`), and every file decodes through `codec`'s one
//! bounds-checked reader.

pub(crate) mod attribute;
pub(crate) mod blob;
pub(crate) mod btree;
pub(crate) mod chunk_index;
pub(crate) mod codec;
pub(crate) mod datatype;
pub(crate) mod external_list;
pub(crate) mod filter_pipeline;
pub(crate) mod free_space;
pub(crate) mod journal_layout;
pub(crate) mod link;
pub(crate) mod link_count;
pub(crate) mod object_header;
pub(crate) mod page;
pub(crate) mod region;
pub(crate) mod rows;
pub(crate) mod shape;
pub(crate) mod superblock;
pub(crate) mod virtual_map;
pub(crate) mod vlen_attr;
pub(crate) mod vlen_vector;
