//! The AXI4-Lite slave's ports `s_axil_*`, declared once for the two blocks that have them: the
//! register block ([`super::registers::Registers`], which answers the bus) and the accelerator
//! top ([`super::accelerator::Accelerator`], which passes it through from XDMA's AXI4-Lite
//! master).
//!
//! Why a macro and not a rust-hdl `LogicInterface` bundle (as rust-hdl's own AXI and Wishbone
//! buses are): rust-hdl names an interface's signals `<field>$<signal>` (its namespace joined with
//! `$`), and an `#[hdl_gen]` body reaches them through that path, so the top's ports would become
//! `s_axil$awaddr`, …; and joining two bundles writes `assign` statements where the top now assigns
//! its ports inside its always block. The port names are part of the interface (the board top, the
//! Verilator harness and the manifest use them), and the emitted Verilog stays as it is. So the
//! ports stay flat fields named `s_axil_*`, and [`axi_lite_slave`] writes them into both blocks.

/// Declares a block whose first field is its clock, followed by the AXI4-Lite slave's ports, then
/// the fields given (the order is the Verilog's port order), or writes such a block's value with
/// every AXI4-Lite port at its default:
///
/// ```text
/// axi_lite_slave! {
///     /// A block.
///     #[derive(LogicBlock)]
///     pub struct Block {
///         /// The clock.
///         pub clock: Signal<In, Clock>,
///         /// Its other ports and state.
///         pub other: Signal<Out, bool>,
///     }
/// }
///
/// let block = axi_lite_slave!(Block { clock: Default::default(), other: Default::default() });
/// ```
macro_rules! axi_lite_slave {
    (
        $(#[$attribute:meta])*
        $visibility:vis struct $name:ident {
            $(#[$clock_attribute:meta])*
            pub clock: $clock:ty,
            $($fields:tt)*
        }
    ) => {
        $(#[$attribute])*
        $visibility struct $name {
            $(#[$clock_attribute])*
            pub clock: $clock,
            /// AXI4-Lite write address.
            pub s_axil_awaddr: Signal<In, Bits<{ $crate::interface::ADDRESS_BITS }>>,
            /// AXI4-Lite write address valid.
            pub s_axil_awvalid: Signal<In, bool>,
            /// AXI4-Lite write address ready.
            pub s_axil_awready: Signal<Out, bool>,
            /// AXI4-Lite write data.
            pub s_axil_wdata: Signal<In, Bits<32>>,
            /// AXI4-Lite write strobes: any set writes the whole register, none writes nothing.
            pub s_axil_wstrb: Signal<In, Bits<4>>,
            /// AXI4-Lite write data valid.
            pub s_axil_wvalid: Signal<In, bool>,
            /// AXI4-Lite write data ready.
            pub s_axil_wready: Signal<Out, bool>,
            /// AXI4-Lite write response (always OKAY).
            pub s_axil_bresp: Signal<Out, Bits<2>>,
            /// AXI4-Lite write response valid.
            pub s_axil_bvalid: Signal<Out, bool>,
            /// AXI4-Lite write response ready.
            pub s_axil_bready: Signal<In, bool>,
            /// AXI4-Lite read address.
            pub s_axil_araddr: Signal<In, Bits<{ $crate::interface::ADDRESS_BITS }>>,
            /// AXI4-Lite read address valid.
            pub s_axil_arvalid: Signal<In, bool>,
            /// AXI4-Lite read address ready.
            pub s_axil_arready: Signal<Out, bool>,
            /// AXI4-Lite read data.
            pub s_axil_rdata: Signal<Out, Bits<32>>,
            /// AXI4-Lite read response (always OKAY).
            pub s_axil_rresp: Signal<Out, Bits<2>>,
            /// AXI4-Lite read data valid.
            pub s_axil_rvalid: Signal<Out, bool>,
            /// AXI4-Lite read data ready.
            pub s_axil_rready: Signal<In, bool>,
            $($fields)*
        }
    };
    ($name:ident { $($fields:tt)* }) => {
        $name {
            s_axil_awaddr: Default::default(),
            s_axil_awvalid: Default::default(),
            s_axil_awready: Default::default(),
            s_axil_wdata: Default::default(),
            s_axil_wstrb: Default::default(),
            s_axil_wvalid: Default::default(),
            s_axil_wready: Default::default(),
            s_axil_bresp: Default::default(),
            s_axil_bvalid: Default::default(),
            s_axil_bready: Default::default(),
            s_axil_araddr: Default::default(),
            s_axil_arvalid: Default::default(),
            s_axil_arready: Default::default(),
            s_axil_rdata: Default::default(),
            s_axil_rresp: Default::default(),
            s_axil_rvalid: Default::default(),
            s_axil_rready: Default::default(),
            $($fields)*
        }
    };
}
pub(crate) use axi_lite_slave;
