//! # ecrt-lab
//!
//! The design-space and documentation tools behind `ecrt bench`, `ecrt bench-modexp`,
//! `ecrt bench-multiplier`, `ecrt bench-lanes`, `ecrt estimate` and `ecrt explore`, and the
//! figures page: what a design projects for one chip ([`chip`]), the benches ([`bench`],
//! [`modexp_bench`], [`multiplier_bench`], [`lanes_bench`]), Yosys's estimates ([`estimate`]), the configuration sweep and its
//! Pareto plot ([`explore`], [`point`], [`pareto_plot`]), and docs/figures.md rendered from the
//! measurement records ([`figures`]). Each report is a struct beside its writer, which the figures
//! page reads back ([`report`] holds what they share; [`python_bench`] the Python package's
//! reports). Each tool's flags ([`args`] for the shared ones) are clap's, so that the `ecrt`
//! command only lists them.

pub mod args;
pub mod bench;
pub mod chip;
pub mod clocked;
pub mod estimate;
pub mod explore;
pub mod figures;
pub mod lanes_bench;
pub mod modexp_bench;
pub mod multiplier_bench;
pub mod pareto_plot;
pub mod point;
pub mod python_bench;
pub mod report;
