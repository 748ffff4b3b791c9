//! Where the row stream's time goes: seconds by part (reading the roster, the boards,
//! computing, checking the employees, loading, committing...), summed over the stream's threads.
//! The parts overlap in wall time, which is the point of the stream; `-v` and the benchmark
//! show them, so that a slow night says which store it waited on.

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub(crate) struct Spent(Mutex<Vec<(&'static str, Duration)>>);

impl Spent {
    /// Run `f`, adding its wall time to `part`.
    pub(crate) fn time<R>(&self, part: &'static str, f: impl FnOnce() -> R) -> R {
        let started = Instant::now();
        let r = f();
        self.add(part, started.elapsed());
        r
    }

    /// Add `d` to `part` (for a part timed elsewhere, as MySQL's writers time theirs).
    pub(crate) fn add(&self, part: &'static str, d: Duration) {
        // A panicking thread poisons nothing worth refusing a figure for.
        let mut parts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match parts.iter_mut().find(|(p, _)| *p == part) {
            Some((_, sum)) => *sum += d,
            None => parts.push((part, d)),
        }
    }

    /// Seconds by part, in the order each part first ran.
    pub(crate) fn seconds(self) -> Vec<(&'static str, f64)> {
        let parts = self.0.into_inner().unwrap_or_else(|p| p.into_inner());
        parts.into_iter().map(|(p, d)| (p, d.as_secs_f64())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_sum_over_calls_and_keep_their_first_order() {
        let spent = Spent::default();
        spent.add("b", Duration::from_millis(5));
        spent.add("a", Duration::from_millis(1));
        spent.add("b", Duration::from_millis(7));
        assert_eq!(spent.time("a", || 42), 42);
        let secs = spent.seconds();
        assert_eq!(secs.iter().map(|(p, _)| *p).collect::<Vec<_>>(), ["b", "a"]);
        assert!((secs[0].1 - 0.012).abs() < 1e-9);
        assert!(secs[1].1 >= 0.001);
    }
}
