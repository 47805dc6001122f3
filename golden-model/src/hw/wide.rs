//! 24×17 products: the multiplicand B in 23-bit windows on the DSP48E1's 25-bit port, the
//! multiplier's 17-bit digits on its 18-bit port, so that the a·b products of a step take
//! ⌈17·L/23⌉ DSPs a row instead of L (L = operand limbs).
//!
//! Windows. B arrives as normalized limbs u_j < 2^17 + 3 at bit 17j. Window i holds the bits of
//! B's limbs that fall in [23i, 23i + 23): each limb is placed at its offset and split where it
//! crosses a window boundary (18 bits cross at most one), and the pieces of a window are added.
//! So b′_i is B's value cut at the window boundaries without any carry between windows:
//! Σ b′_i·2^(23i) = Σ u_j·2^(17j). A window's pieces are 23 bits of limbs plus the bit 17 of at
//! most two limbs, which lands at bit 17·j − 23·i + 17 < 23: b′_i < 2^23 + 2^22 + 2^6 < 2^24,
//! an unsigned 24-bit value on the signed 25-bit port. (Exact 24-bit windows would need B's
//! carries resolved across its whole width first.)
//!
//! Landing. Window i starts at bit 23i = 17·c_i + s_i, c_i = ⌊23i/17⌋, s_i = 23i mod 17, so the
//! product p = d·b′_i (< 2^41) of the digit of row l lands s_i bits into column l + c_i. It is
//! added as three grid-aligned pieces: low = (p mod 2^(17 − s_i))·2^(s_i) < 2^17 in column
//! l + c_i, mid = (p >> (17 − s_i)) mod 2^17 in column l + c_i + 1, and top = p >> (34 − s_i)
//! < 2^(7 + s_i) ≤ 2^23 in column l + c_i + 2. The mid piece goes into the C port of the loop DSP
//! of row l at position c_i + 1, which lands in that column (c_i is strictly increasing in i, so
//! each loop DSP receives at most one); the low and top pieces into the column's addend, formed a
//! cycle before the column sums.
//!
//! So the loop products stay below 2^36 + 2^17 as with B in limbs, column sums below 2^41 for
//! k ≤ 16, and T's limbs below 2^18 + 2^7: the bounds of [`super::fold`] hold unchanged.

/// Bits of a window of B: 23, so that a window with its carries (< 2^24) is unsigned on the
/// DSP48E1's 25-bit signed port.
pub const WINDOW_BITS: u32 = 23;

/// Bits of a limb: the DSP48E1's 18-bit port holds an exact limb.
pub const LIMB_BITS: u32 = 17;

/// How the multiplier holds B for its a·b products.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Multiplicand {
    /// B in its 17-bit limbs: 17×18-bit products, one per limb, each added whole into its
    /// column (in the loop DSP's C port). The accelerator's earlier layout.
    Limbs,
    /// B in 23-bit windows: 17×24-bit products, each added as two grid-aligned pieces. The
    /// accelerator's layout.
    #[default]
    Windows,
}

impl Multiplicand {
    /// B's windows when B is held in windows (`None` in limbs): formed once a multiplication, as
    /// the hardware forms them when it loads B.
    pub fn windows(self, b: &[u64], operand_limbs: usize) -> Option<Vec<u64>> {
        (self == Multiplicand::Windows).then(|| windows(b, window_count(operand_limbs)))
    }
}

/// Windows of an operand of `operand_limbs` limbs: ⌈17·L/23⌉.
pub fn window_count(operand_limbs: usize) -> usize {
    (LIMB_BITS as usize * operand_limbs).div_ceil(WINDOW_BITS as usize)
}

/// Where window i's products land: (column ⌊23i/17⌋ of the row, shift 23i mod 17 in it).
pub fn landing(window: usize) -> (usize, u32) {
    let bit = WINDOW_BITS as usize * window;
    (bit / LIMB_BITS as usize, (bit % LIMB_BITS as usize) as u32)
}

/// B's `count` windows from its limbs (each < 2^17 + 3, or exact).
pub fn windows(limbs: &[u64], count: usize) -> Vec<u64> {
    let width = WINDOW_BITS as usize;
    let mut windows = vec![0u64; count + 1];
    for (j, &limb) in limbs.iter().enumerate() {
        let bit = LIMB_BITS as usize * j;
        let (i, offset) = (bit / width, bit % width);
        let room = width - offset;
        windows[i] += (limb & ((1 << room) - 1)) << offset;
        windows[i + 1] += limb >> room;
    }
    debug_assert_eq!(windows[count], 0, "B has more bits than its windows");
    windows.truncate(count);
    debug_assert!(windows.iter().all(|&w| w < 1 << (WINDOW_BITS + 1)), "window ≥ 2^24");
    windows
}

/// A product of a window landing with `shift`, as the three pieces the hardware adds: (low, for
/// the landing column, < 2^17; mid, for the column above, < 2^17; top, for the one above that,
/// < 2^23).
pub fn split(product: u64, shift: u32) -> (u64, u64, u64) {
    let low_bits = LIMB_BITS - shift;
    let mid = (product >> low_bits) & ((1 << LIMB_BITS) - 1);
    ((product & ((1 << low_bits) - 1)) << shift, mid, product >> (low_bits + LIMB_BITS))
}

/// Adds digit·B to column sums, B in windows, the digit's row starting at column `row`.
/// Products that would land past the last column must be 0 (a debug assertion).
pub fn add_row(sums: &mut [u64], row: usize, digit: u64, windows: &[u64]) {
    for (i, &window) in windows.iter().enumerate() {
        let (column, shift) = landing(i);
        let (low, mid, top) = split(digit * window, shift);
        add_at(sums, row + column, low);
        add_at(sums, row + column + 1, mid);
        add_at(sums, row + column + 2, top);
    }
}

fn add_at(sums: &mut [u64], column: usize, value: u64) {
    match sums.get_mut(column) {
        Some(sum) => *sum += value,
        None => debug_assert_eq!(value, 0, "a product lands past T's columns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::fold::limbs_value;
    use num_bigint::BigUint;
    use proptest::prelude::*;

    fn windows_value(windows: &[u64]) -> BigUint {
        windows.iter().rev().fold(BigUint::default(), |acc, &w| (acc << WINDOW_BITS) + w)
    }

    #[test]
    fn windows_hold_the_value_below_two_to_the_24() {
        // The largest normalized limbs everywhere: every window at its bound.
        for limbs in [124usize, 17, 1] {
            let top = vec![(1u64 << LIMB_BITS) + 2; limbs];
            let w = windows(&top, window_count(limbs));
            assert_eq!(windows_value(&w), limbs_value(&top));
            assert!(w.iter().all(|&x| x < 1 << 24), "{limbs} limbs");
        }
    }

    #[test]
    fn landings_are_increasing_and_within_a_limb() {
        let mut last = None;
        for i in 0..200 {
            let (column, shift) = landing(i);
            assert!(shift < LIMB_BITS);
            assert_eq!(17 * column + shift as usize, 23 * i);
            assert!(last.is_none_or(|c| column > c), "one window per column and row");
            last = Some(column);
        }
        assert_eq!(window_count(124), 92);
        assert_eq!(window_count(123), 91);
    }

    proptest! {
        #[test]
        fn pieces_add_up_to_the_row_product(
            limbs in proptest::collection::vec(0u64..(1 << 17) + 3, 1..40),
            digit in 0u64..1 << 17,
            row in 0usize..4,
        ) {
            let count = window_count(limbs.len());
            let w = windows(&limbs, count);
            prop_assert_eq!(windows_value(&w), limbs_value(&limbs));
            let mut sums = vec![0u64; row + limbs.len() + 4];
            add_row(&mut sums, row, digit, &w);
            let total = sums.iter().rev().fold(BigUint::default(), |acc, &s| (acc << LIMB_BITS) + s);
            prop_assert_eq!(total, (limbs_value(&limbs) * digit) << (LIMB_BITS as usize * row));
            for (i, &window) in w.iter().enumerate() {
                let (low, mid, top) = split(digit * window, landing(i).1);
                prop_assert!(low < 1 << 17 && mid < 1 << 17 && top < 1 << 23);
            }
        }
    }
}
