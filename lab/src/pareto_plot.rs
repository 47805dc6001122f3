//! `ecrt explore`'s Pareto plot: latency of one decryption against the chip's throughput, each at
//! the point's plausible clock (at 100 MHz for a sweep run with `--no-timing`), one panel per key
//! size, a colour per digits per step and a shape per engine, the front drawn through, and for
//! 2048-bit keys the targets (MESA's latency, the chip's pace). SVG, drawn with plotters; its text needs a TrueType font,
//! read at run time.

use crate::chip::{MESA_CYCLES, REFERENCE_MHZ, TARGET_THROUGHPUT, TARGET_THROUGHPUT_PLAUSIBLE_CLOCK};
use crate::point::Point;
use ecrt_contract::config::{Engine, ExponentSchedule};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Where Debian (fonts-dejavu-core, fonts-liberation), Fedora and Arch keep a sans-serif font.
const FONT_PATHS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// Registers a font as plotters' "sans-serif": `$ECRT_FONT`, or the first of [`FONT_PATHS`]. A sweep
/// calls it before its estimates, so that a missing font fails in a second, not after them.
pub fn register_font() -> anyhow::Result<()> {
    static REGISTERED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    if REGISTERED.get().is_some() {
        return Ok(());
    }
    let candidates: Vec<PathBuf> = std::env::var_os("ECRT_FONT")
        .map(PathBuf::from)
        .into_iter()
        .chain(FONT_PATHS.iter().map(PathBuf::from))
        .collect();
    let path = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
        anyhow::anyhow!(
            "the Pareto plot needs a TrueType font and none was found (looked for {}): install fonts-dejavu-core \
             (scripts/setup does), or set ECRT_FONT to a .ttf file",
            FONT_PATHS.join(", ")
        )
    })?;
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read the font {}: {e}", path.display()))?;
    // plotters keeps the font for the process's life.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| anyhow::anyhow!("{} is not a usable TrueType font", path.display()))?;
    REGISTERED.get_or_init(|| ());
    Ok(())
}

/// Draws `points` to an SVG file at `path`.
pub fn draw(points: &[Point], path: &Path) -> anyhow::Result<()> {
    register_font()?;
    let mut key_sizes: Vec<usize> = points.iter().map(|p| p.config.key_bits).collect();
    key_sizes.sort_unstable();
    key_sizes.dedup();
    let root = SVGBackend::new(path, (900, 560 * key_sizes.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    for (panel, key_bits) in root.split_evenly((key_sizes.len(), 1)).iter().zip(key_sizes) {
        let ours: Vec<&Point> = points.iter().filter(|p| p.config.key_bits == key_bits).collect();
        draw_panel(panel, key_bits, &ours).map_err(plot_error)?;
    }
    root.present().map_err(plot_error)?;
    Ok(())
}

fn plot_error<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("cannot draw the Pareto plot: {e:?}")
}

type Panel<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_panel(panel: &Panel, key_bits: usize, points: &[&Point]) -> Result<(), Box<dyn std::error::Error>> {
    let targets = key_bits == 2048;
    let timed = points.iter().all(|p| p.latency_us_plausible_clock.is_some());
    // MESA's latency at its 100 MHz, in the plot's unit; the chip's throughput target at the clock drawn.
    let (mesa, throughput_target, caption, unit) = if timed {
        (MESA_CYCLES / REFERENCE_MHZ, TARGET_THROUGHPUT_PLAUSIBLE_CLOCK, "each at its plausible clock", "µs")
    } else {
        (MESA_CYCLES / (REFERENCE_MHZ * 1e3), TARGET_THROUGHPUT, "at 100 MHz", "ms")
    };
    let max_x = points.iter().map(|p| p.plotted().0).fold(if targets { mesa } else { 0.0 }, f64::max);
    let max_y = points.iter().map(|p| p.plotted().1).fold(if targets { throughput_target } else { 0.0 }, f64::max);
    let mut chart = ChartBuilder::on(panel)
        .caption(format!("{key_bits}-bit keys: one xc7vx690t, {caption}"), ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..max_x * 1.12, 0f64..max_y * 1.15)?;
    chart
        .configure_mesh()
        .x_desc(format!("latency of one decryption, idle core ({unit}, {caption})"))
        .y_desc("decryptions/s, chip filled with cores")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;

    if targets {
        let grey = RGBColor(150, 150, 150);
        let x = mesa;
        chart
            .draw_series(LineSeries::new([(x, 0.0), (x, max_y * 1.15)], grey.stroke_width(1)))?
            .label("MESA's latency (≤)")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], grey));
        let red = RGBColor(200, 80, 80);
        chart
            .draw_series(LineSeries::new(
                [(0.0, throughput_target), (max_x * 1.12, throughput_target)],
                red.stroke_width(1),
            ))?
            .label("target throughput (≥)")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], red));
    }

    let mut front: Vec<(f64, f64)> = points.iter().filter(|p| p.pareto).map(|p| p.plotted()).collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart
        .draw_series(LineSeries::new(front, BLACK.stroke_width(1)))?
        .label("Pareto front")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK));

    let mut ks: Vec<usize> = points.iter().map(|p| p.config.digits_per_step).collect();
    ks.sort_unstable();
    ks.dedup();
    for (i, k) in ks.into_iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let ours: Vec<&&Point> = points.iter().filter(|p| p.config.digits_per_step == k).collect();
        chart
            .draw_series(ours.iter().map(|p| {
                let at = p.plotted();
                // Only the front is named: points of one k sit close together.
                let name = if p.pareto {
                    let cores = p.cores_per_xc7vx690t;
                    let plural = if cores == 1 { "" } else { "s" };
                    format!(
                        "k={}, {}, {}: {cores} core{plural}",
                        p.config.digits_per_step,
                        p.config.schedule_label(),
                        p.config.engine
                    )
                } else {
                    String::new()
                };
                let size = if p.pareto { 5 } else { 3 };
                // The lanes engine's points are discs, the delay engine's squares, the two-slot
                // engine's rings (its segmented schedule triangles).
                let marker: DynElement<_, (i32, i32)> = match (p.config.schedule, p.config.engine) {
                    (ExponentSchedule::Segmented, _) => {
                        TriangleMarker::new((0, 0), size + 2, colour.filled()).into_dyn()
                    }
                    (_, Engine::Lanes) => Circle::new((0, 0), size, colour.filled()).into_dyn(),
                    (_, Engine::Delay) => Rectangle::new([(-size, -size), (size, size)], colour.filled()).into_dyn(),
                    (_, Engine::Slots) => Circle::new((0, 0), size, colour.stroke_width(2)).into_dyn(),
                };
                EmptyElement::at(at) + marker + Text::new(name, (6, -14), ("sans-serif", 12))
            }))?
            .label(format!("k = {k} limbs per step"))
            .legend(move |(x, y)| Circle::new((x + 9, y), 4, colour.filled()));
    }
    if points.iter().any(|p| p.config.engine == Engine::Delay) {
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label("squares: delay engine")
            .legend(|(x, y)| Rectangle::new([(x + 5, y - 4), (x + 13, y + 4)], BLACK.filled()));
    }
    if points.iter().any(|p| p.config.engine == Engine::Slots) {
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label("rings: two-slot engine")
            .legend(|(x, y)| Circle::new((x + 9, y), 4, BLACK.stroke_width(2)));
    }
    if points.iter().any(|p| p.config.schedule == ExponentSchedule::Segmented) {
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label("triangles: segmented schedule")
            .legend(|(x, y)| TriangleMarker::new((x + 9, y), 5, BLACK.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    Ok(())
}
