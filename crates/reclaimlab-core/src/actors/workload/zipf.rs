//! Zipf sampling over ranks 1..=n in O(1) per draw. Up to `ALIAS_MAX_N` ranks it uses an
//! alias table (Vose's method: one random number and one table lookup per draw, 8 bytes per
//! rank); above that, rejection-inversion (Hörmann and Derflinger, "Rejection-inversion to
//! generate variates from monotone discrete distributions", 1996), which needs no table.

use crate::engine::Rng;

/// Largest rank count sampled through an alias table (32 MiB of table).
pub const ALIAS_MAX_N: u64 = 1 << 22;

#[derive(Debug, Clone)]
pub enum Zipf {
    Alias(Alias),
    Rejection(Rejection),
}

impl Zipf {
    /// Ranks 1..=n with P(k) proportional to k^-s (s > 0).
    pub fn new(n: u64, s: f64) -> Zipf {
        if n <= ALIAS_MAX_N {
            let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
            Zipf::Alias(Alias::new(&w))
        } else {
            Zipf::Rejection(Rejection::new(n, s))
        }
    }

    /// A rank in 1..=n.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            Zipf::Alias(a) => a.sample(rng) + 1,
            Zipf::Rejection(r) => r.sample(rng),
        }
    }
}

/// Walker/Vose alias table over indices 0..n.
#[derive(Debug, Clone)]
pub struct Alias {
    /// Per column: acceptance threshold scaled to 2^32, and the alias (one cache line per draw).
    table: Vec<[u32; 2]>,
}

impl Alias {
    pub fn new(weights: &[f64]) -> Alias {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut prob = vec![u32::MAX; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(&l), Some(&g)) = (small.last(), large.last()) {
            small.pop();
            prob[l] = (scaled[l] * 4_294_967_296.0).min(u32::MAX as f64) as u32;
            alias[l] = g as u32;
            scaled[g] -= 1.0 - scaled[l];
            if scaled[g] < 1.0 {
                large.pop();
                small.push(g);
            }
        }
        // Leftovers (rounding) keep probability one: they are their own alias.
        let table = prob.into_iter().zip(alias).map(|(p, a)| [p, a]).collect();
        Alias { table }
    }

    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let r = rng.next_u64();
        self.resolve(self.column(r), r)
    }

    /// The column a random word selects (first half of a draw; see `resolve`).
    #[inline]
    pub fn column(&self, r: u64) -> usize {
        (((r >> 32) * self.table.len() as u64) >> 32) as usize
    }

    /// Address of a column, to prefetch it before `resolve` reads it.
    #[inline]
    pub fn column_ptr(&self, i: usize) -> *const [u32; 2] {
        &self.table[i]
    }

    /// Second half of a draw: the column itself or its alias.
    #[inline]
    pub fn resolve(&self, i: usize, r: u64) -> u64 {
        let [p, a] = self.table[i];
        if (r as u32) < p {
            i as u64
        } else {
            a as u64
        }
    }
}

#[derive(Debug, Clone)]
pub struct Rejection {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    threshold: f64,
}

/// (e^x - 1) / x, accurate near 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0 * (1.0 + x / 3.0 * (1.0 + x / 4.0))
    }
}

/// ln(1 + x) / x, accurate near 0.
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

impl Rejection {
    pub fn new(n: u64, s: f64) -> Rejection {
        assert!(n >= 1 && s > 0.0);
        let mut z = Rejection {
            n: n as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            threshold: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n as f64 + 0.5);
        z.threshold = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// Integral of h: H(x) = (x^(1-s) - 1) / (1 - s), written to be stable at s = 1.
    fn big_h(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over_x((1.0 - self.s) * lx) * lx
    }

    fn big_h_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (ln1p_over_x(t) * x).exp()
    }

    /// A rank in 1..=n.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.next_f64() * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.threshold || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_power_law(z: &Zipf) {
        let mut rng = Rng::for_actor(3, "zipf");
        let mut c = [0u64; 3];
        let n = 400_000;
        for _ in 0..n {
            let k = z.sample(&mut rng);
            assert!((1..=1000).contains(&k));
            if k <= 2 {
                c[k as usize] += 1;
            }
        }
        let p1 = c[1] as f64 / n as f64;
        assert!((p1 - 0.1336).abs() < 0.005, "p1 = {p1}");
        let ratio = c[1] as f64 / c[2] as f64;
        assert!((ratio - 2.0).abs() < 0.1, "ratio = {ratio}");
    }

    #[test]
    fn both_samplers_follow_the_power_law() {
        // With s = 1 over 1000 ranks, P(1)/P(2) = 2 and P(1) = 1/H_1000 ~ 0.1336.
        check_power_law(&Zipf::new(1000, 1.0));
        check_power_law(&Zipf::Rejection(Rejection::new(1000, 1.0)));
    }

    #[test]
    fn other_exponents_stay_in_range() {
        for s in [0.5, 0.99, 1.2, 2.0] {
            for z in [Zipf::new(10, s), Zipf::Rejection(Rejection::new(10, s))] {
                let mut rng = Rng::for_actor(1, "z");
                for _ in 0..10_000 {
                    assert!((1..=10).contains(&z.sample(&mut rng)));
                }
            }
        }
    }
}
