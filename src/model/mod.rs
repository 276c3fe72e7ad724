//! The vocabulary every layer shares: the seven dimensions and the names of the fields the worker
//! reads and writes. Plain data, no I/O; the command line, the configuration and the engine all use
//! this one table.

pub mod dimension;
pub mod fields;

pub use dimension::{Dimension, DimensionError, Exclusion};
pub use fields::{FieldNames, Profile, IN_PLACE_NAMES, YACY_NAMES};
