//! An API error: an HTTP status and the message h5grove puts in
//! `{"message": ...}`.

use std::fmt;

/// A refused request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// What went wrong, for the client.
    pub message: String,
}

impl ApiError {
    /// A status and a message.
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// 404: no such object (or file).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, message)
    }

    /// 422: a query argument the object cannot take (h5grove's
    /// `QueryArgumentError`).
    pub fn query(message: impl Into<String>) -> Self {
        Self::new(422, message)
    }

    /// A library error met while reading: a damaged file is a 500 naming
    /// the damage; anything else the library refuses a 422.
    pub fn arca(e: arca::Error) -> Self {
        match e {
            arca::Error::NotFound(p) => Self::not_found(format!("{p} not found")),
            e @ (arca::Error::Corrupt { .. } | arca::Error::Io { .. }) => {
                Self::new(500, e.to_string())
            }
            e => Self::query(e.to_string()),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status, self.message)
    }
}

impl From<arca::Error> for ApiError {
    fn from(e: arca::Error) -> Self {
        Self::arca(e)
    }
}
