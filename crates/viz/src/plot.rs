//! Message complexity against `n`: per algorithm, the measured election messages per process (mean over seeds,
//! with the range as a band) and the closed-form bound, on log–log axes.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

/// Why a plot could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The output name has no known picture format.
    #[error("cannot tell the picture format of {0}: use a .svg or .png file name")]
    Format(String),
    /// Nothing to plot.
    #[error("no runs to plot")]
    Empty,
    /// The CSV lacks a column or has a bad value.
    #[error("{0}")]
    Input(String),
    /// Reading the CSV failed.
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// Drawing failed.
    #[error("cannot draw {path}: {message}")]
    Draw {
        /// The output file.
        path: String,
        /// What the backend said.
        message: String,
    },
}

/// What a plot shows against `n`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Election messages per process, as each algorithm's headline bound counts them, with the bound.
    #[default]
    Election,
    /// All messages per process (a synchronizer's acks and control messages included).
    Messages,
    /// The time until every process knows the leader (the end of the run when they do not agree).
    Time,
}

impl Metric {
    fn per_process(self) -> bool {
        self != Self::Time
    }

    fn axis(self) -> &'static str {
        match self {
            Self::Election => "election messages per process",
            Self::Messages => "messages per process",
            Self::Time => "time until every process knows the leader",
        }
    }
}

/// One run, reduced to what the plot shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The series: the algorithm, and the synchronizer it ran on.
    pub algorithm: String,
    /// `n`.
    pub n: usize,
    /// The value the metric measures: a count of messages, or a time in units.
    pub measured: f64,
    /// The headline bound's formula and value (election messages only).
    pub bound: Option<(String, f64)>,
}

/// The series a run belongs to.
fn series_name(algorithm: &str, synchronizer: Option<&str>) -> String {
    match synchronizer {
        Some(s) if !s.is_empty() => format!("{algorithm} on {s}"),
        _ => algorithm.to_owned(),
    }
}

impl Point {
    /// A run of `algorithm` (on `synchronizer`, if any) on `n` processes that measured `measured`, with its
    /// headline bound's formula and value.
    pub fn new(
        algorithm: &str,
        synchronizer: Option<&str>,
        n: usize,
        measured: f64,
        bound: Option<(String, f64)>,
    ) -> Self {
        Self { algorithm: series_name(algorithm, synchronizer), n, measured, bound }
    }
}

/// Reads the points of a sweep CSV (as written by `elect sweep`) for `metric`.
pub fn read_csv(input: impl Read, metric: Metric) -> Result<Vec<Point>, PlotError> {
    let mut reader = csv::Reader::from_reader(input);
    let header = reader.headers()?.clone();
    // Each column by its name with its unit, or by the name it had before units were named.
    let column = |name: &str, before: &str| {
        header
            .iter()
            .position(|h| h == name || h == before)
            .ok_or_else(|| PlotError::Input(format!("the CSV has no '{name}' column")))
    };
    let (algorithm, n, messages) =
        (column("algorithm", "algorithm")?, column("n_processes", "n")?, column("messages_total", "messages")?);
    let (bound, value, measured) = (
        column("bound", "bound")?,
        column("bound_value_messages", "bound_value")?,
        column("bound_measured_messages", "bound_measured")?,
    );
    let (elected_at, end_time) = (column("elected_at_t", "elected_at")?, column("end_t", "end_time")?);
    let synchronizer = column("synchronizer", "synchronizer").ok();
    let mut points = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record?;
        let number = |i: usize| -> Result<Option<u64>, PlotError> {
            match record.get(i).unwrap_or("") {
                "" => Ok(None),
                v => v.parse().map(Some).map_err(|_| {
                    PlotError::Input(format!("row {}: '{v}' in column '{}' is not a count", line + 2, &header[i]))
                }),
            }
        };
        let time = |i: usize| -> Result<Option<f64>, PlotError> {
            match record.get(i).unwrap_or("") {
                "" => Ok(None),
                v => v.parse::<f64>().ok().filter(|t| (0.0..1e18).contains(t)).map(Some).ok_or_else(|| {
                    PlotError::Input(format!("row {}: '{v}' in column '{}' is not a time", line + 2, &header[i]))
                }),
            }
        };
        let n = number(n)?.ok_or_else(|| PlotError::Input(format!("row {}: no n", line + 2)))?;
        // A plot is against n on a logarithmic axis, per process: n is a process count, as a sweep writes it.
        if n == 0 || n > 1 << 40 {
            return Err(PlotError::Input(format!("row {}: n = {n} is not a number of processes", line + 2)));
        }
        let messages = number(messages)?.unwrap_or(0);
        let (measured, bound) = match metric {
            Metric::Election => (
                number(measured)?.unwrap_or(messages) as f64,
                number(value)?.map(|v| (record.get(bound).unwrap_or("").to_owned(), v as f64)),
            ),
            Metric::Messages => (messages as f64, None),
            Metric::Time => (time(elected_at)?.or(time(end_time)?).unwrap_or(0.0), None),
        };
        points.push(Point {
            algorithm: series_name(record.get(algorithm).unwrap_or(""), synchronizer.and_then(|i| record.get(i))),
            n: n as usize,
            measured,
            bound,
        });
    }
    Ok(points)
}

/// The points of one algorithm at one `n`, per process.
struct Summary {
    n: f64,
    mean: f64,
    min: f64,
    max: f64,
    bound: Option<f64>,
}

/// Per algorithm (in order of first appearance): its bound's name and the summaries by `n`, per process or not.
fn summarize(points: &[Point], per_process: bool) -> Vec<(String, Option<String>, Vec<Summary>)> {
    let mut order: Vec<&str> = Vec::new();
    let mut groups: BTreeMap<(&str, usize), Vec<&Point>> = BTreeMap::new();
    for p in points {
        if !order.contains(&p.algorithm.as_str()) {
            order.push(&p.algorithm);
        }
        groups.entry((&p.algorithm, p.n)).or_default().push(p);
    }
    order
        .into_iter()
        .map(|algorithm| {
            let mut bound_name = None;
            let summaries = groups
                .range((algorithm, 0)..=(algorithm, usize::MAX))
                .map(|(&(_, n), runs)| {
                    let per = |m: f64| if per_process { m / n as f64 } else { m };
                    let values: Vec<f64> = runs.iter().map(|p| per(p.measured)).collect();
                    let bound = runs.iter().filter_map(|p| p.bound.as_ref()).map(|(name, v)| {
                        bound_name.get_or_insert_with(|| name.clone());
                        per(*v)
                    });
                    Summary {
                        n: n as f64,
                        mean: values.iter().sum::<f64>() / values.len() as f64,
                        min: values.iter().copied().fold(f64::INFINITY, f64::min),
                        max: values.iter().copied().fold(0.0, f64::max),
                        bound: bound.fold(None, |acc: Option<f64>, b| Some(acc.map_or(b, |a| a.max(b)))),
                    }
                })
                .collect();
            (algorithm.to_owned(), bound_name, summaries)
        })
        .collect()
}

const SIZE: (u32, u32) = (1100, 700);

/// Distinct, readable line colors (the Tableau 10 palette).
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
];

static FONT: Once = Once::new();

/// Makes the embedded font the `sans-serif` family.
fn register_font() {
    FONT.call_once(|| {
        let font = include_bytes!("../assets/DejaVuSans.ttf");
        // Registration only fails on a malformed font, and this one is fixed at build time.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, font);
    });
}

/// Draws `metric` of `points` against `n` to `path` (`.svg` or `.png`).
pub fn complexity_plot(points: &[Point], title: &str, path: &Path, metric: Metric) -> Result<(), PlotError> {
    if points.is_empty() {
        return Err(PlotError::Empty);
    }
    let draw_error =
        |e: &dyn std::fmt::Display| PlotError::Draw { path: path.display().to_string(), message: e.to_string() };
    register_font(); // Both backends lay text out with it.
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("svg") => {
            let root = SVGBackend::new(path, SIZE).into_drawing_area();
            draw(&root, points, title, metric).map_err(|e| draw_error(&e))?;
            root.present().map_err(|e| draw_error(&e))
        }
        Some("png") => {
            let (width, height) = SIZE;
            let mut pixels = vec![0u8; width as usize * height as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
                draw(&root, points, title, metric).map_err(|e| draw_error(&e))?;
                root.present().map_err(|e| draw_error(&e))?;
            }
            write_png(path, &pixels, SIZE).map_err(|e| draw_error(&e))
        }
        _ => Err(PlotError::Format(path.display().to_string())),
    }
}

/// Writes `pixels`, rows of 8-bit RGB, as a PNG file.
fn write_png(path: &Path, pixels: &[u8], (width, height): (u32, u32)) -> Result<(), png::EncodingError> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(pixels)?;
    writer.finish()
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: &[Point],
    title: &str,
    metric: Metric,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let series = summarize(points, metric.per_process());
    let all = series.iter().flat_map(|(_, _, s)| s);
    let (x_min, x_max) = all.clone().fold((f64::INFINITY, 0f64), |(lo, hi), s| (lo.min(s.n), hi.max(s.n)));
    let y_max = all.clone().map(|s| s.max.max(s.bound.unwrap_or(0.0))).fold(1.0, f64::max);
    let y_min = all.map(|s| s.min).fold(f64::INFINITY, f64::min).max(0.1);
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((x_min * 0.8..x_max * 1.25).log_scale(), (y_min * 0.8..y_max * 1.5).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("n (processes)")
        .y_desc(metric.axis())
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| if *y >= 10.0 { format!("{y:.0}") } else { format!("{y:.1}") })
        .label_style(("sans-serif", 16))
        .draw()?;
    for (i, (algorithm, bound_name, summaries)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()].to_rgba();
        let band: Vec<(f64, f64)> =
            summaries.iter().map(|s| (s.n, s.max)).chain(summaries.iter().rev().map(|s| (s.n, s.min))).collect();
        chart.draw_series(std::iter::once(Polygon::new(band, color.mix(0.15))))?;
        chart
            .draw_series(LineSeries::new(summaries.iter().map(|s| (s.n, s.mean)), color.stroke_width(2)))?
            .label(algorithm.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], color.stroke_width(2)));
        chart.draw_series(summaries.iter().map(|s| Circle::new((s.n, s.mean), 3, color.filled())))?;
        let bound: Vec<(f64, f64)> = summaries.iter().filter_map(|s| s.bound.map(|b| (s.n, b))).collect();
        if let (Some(name), false) = (bound_name, bound.is_empty()) {
            chart
                .draw_series(DashedLineSeries::new(bound, 6, 5, color.stroke_width(1)))?
                .label(format!("{algorithm} bound: {name}"))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 8, y), (x + 14, y), (x + 24, y)], color));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 15))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_that_cannot_be_plotted_are_refused() {
        let csv = |n: &str, t: &str| {
            format!(
                "algorithm,synchronizer,n,seed,messages,elected_at,declared_at,end_time,bound,bound_value,\
                 bound_measured\nlelann,,{n},1,16,{t},,{t},,,\n"
            )
        };
        assert_eq!(read_csv(csv("8", "3").as_bytes(), Metric::Time).unwrap().len(), 1);
        for (n, t, problem) in [("0", "1", "n = 0"), ("-5", "1", "not a count"), ("8", "NaN", "not a time")] {
            let e = read_csv(csv(n, t).as_bytes(), Metric::Time).unwrap_err().to_string();
            assert!(e.contains(problem), "{n} {t}: {e}");
        }
        assert!(read_csv(csv("8", "inf").as_bytes(), Metric::Time).is_err());
        assert!(read_csv(csv("8", "1e300").as_bytes(), Metric::Time).is_err());
    }

    fn points() -> Vec<Point> {
        let mut points = Vec::new();
        for n in [8usize, 16, 32, 64] {
            for seed in 0..3u64 {
                let lg = n.ilog2() as u64;
                points.push(Point {
                    algorithm: "peterson".into(),
                    n,
                    measured: (2 * n as u64 * (lg - 1) + n as u64 + seed) as f64,
                    bound: Some(("2n floor(lg n) + n".into(), (2 * n as u64 * lg + n as u64) as f64)),
                });
                points.push(Point { algorithm: "lelann".into(), n, measured: 2.0 * n as f64, bound: None });
            }
        }
        points
    }

    #[test]
    fn summaries_are_per_process_means_and_ranges_with_the_bound() {
        let series = summarize(&points(), true);
        assert_eq!(series.len(), 2);
        let (name, bound, summaries) = &series[0];
        assert_eq!((name.as_str(), bound.as_deref()), ("peterson", Some("2n floor(lg n) + n")));
        let at8 = &summaries[0];
        assert_eq!(at8.n, 8.0);
        assert_eq!((at8.min, at8.max), (5.0, 5.25));
        assert_eq!(at8.mean, 5.125);
        assert_eq!(at8.bound, Some(7.0));
        assert_eq!(series[1].1, None);
    }

    #[test]
    fn svg_and_png_are_written_and_other_names_refused() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("plot.svg");
        complexity_plot(&points(), "test", &svg, Metric::Election).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.starts_with("<svg") && text.contains("peterson") && text.contains("bound"));
        let png = dir.path().join("plot.png");
        complexity_plot(&points(), "test", &png, Metric::Election).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        // It decodes as the plot's size in RGB, on a white ground, with something dark drawn on it (axes, text).
        let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size()];
        let frame = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((frame.width, frame.height, frame.color_type), (SIZE.0, SIZE.1, png::ColorType::Rgb));
        let rgb = pixels[..frame.buffer_size()].chunks_exact(3);
        assert_eq!(&pixels[..3], [255, 255, 255], "the corner is the white ground");
        assert!(rgb.filter(|p| p.iter().all(|&c| c < 100)).count() > 1000, "too few dark pixels: nothing drawn");
        let gif = dir.path().join("x.gif");
        assert!(matches!(complexity_plot(&points(), "t", &gif, Metric::Election), Err(PlotError::Format(_))));
        assert!(matches!(complexity_plot(&[], "t", &svg, Metric::Election), Err(PlotError::Empty)));
        let time = dir.path().join("time.svg");
        complexity_plot(&points(), "test", &time, Metric::Time).unwrap();
        assert!(std::fs::read_to_string(&time).unwrap().contains("time until every process knows the leader"));
    }

    #[test]
    fn csv_round_trips_through_the_sweep_format() {
        let csv = "algorithm,n,seed,messages,one,two,leader,elected_at,declared_at,end_time,bound,bound_value,bound_measured,ok\n\
                   peterson,8,1,32,12,12,8,30,21,30,2n floor(lg n) + n one and two,56,24,true\n";
        let points = read_csv(csv.as_bytes(), Metric::Election).unwrap();
        assert_eq!(
            points,
            [Point {
                algorithm: "peterson".into(),
                n: 8,
                measured: 24.0,
                bound: Some(("2n floor(lg n) + n one and two".into(), 56.0))
            }]
        );
        let time = read_csv(csv.as_bytes(), Metric::Time).unwrap();
        assert_eq!((time[0].measured, time[0].bound.clone()), (30.0, None));
        let synced = "algorithm,synchronizer,n,messages,elected_at,end_time,bound,bound_value,bound_measured\n\
                      floodmax,alpha,16,864,18,18,x,288,288\nfloodmax,,16,288,6,6,x,288,288\n";
        let points = read_csv(synced.as_bytes(), Metric::Messages).unwrap();
        assert_eq!((points[0].algorithm.as_str(), points[0].measured), ("floodmax on alpha", 864.0));
        assert_eq!(points[1].algorithm, "floodmax");
        let bad = "algorithm,n\nx,1\n";
        assert!(
            read_csv(bad.as_bytes(), Metric::Election).unwrap_err().to_string().contains("no 'messages_total' column")
        );
    }
}
