//! The host library's integration tests, in one binary: its parsers against phe's vectors and
//! hostile inputs.

mod parsers;
