//! Per-actor random streams.
//!
//! Each actor's stream is seeded from (scenario seed, actor name) only, so adding an actor or
//! switching a policy variant leaves every other actor's stream unchanged: A/B runs share their
//! random numbers (common random numbers) and differences come from the policy alone.
//! The generator is xoshiro256++ seeded through SplitMix64, implemented here so that a
//! dependency upgrade can never change a stream.

#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

#[inline]
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the name: stable across platforms and Rust versions (unlike `DefaultHasher`).
fn name_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

impl Rng {
    /// The stream of actor `name` in a run with scenario seed `seed`.
    pub fn for_actor(seed: u64, name: &str) -> Rng {
        let mut x = seed ^ name_hash(name).rotate_left(17);
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n) (Lemire's multiply-shift; the tiny bias is irrelevant here and the
    /// result is deterministic).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_depend_on_seed_and_name_only() {
        let mut a1 = Rng::for_actor(7, "kswapd0");
        let mut a2 = Rng::for_actor(7, "kswapd0");
        let mut b = Rng::for_actor(7, "hog/anon");
        let mut c = Rng::for_actor(8, "kswapd0");
        let x: Vec<u64> = (0..4).map(|_| a1.next_u64()).collect();
        let y: Vec<u64> = (0..4).map(|_| a2.next_u64()).collect();
        assert_eq!(x, y);
        assert_ne!(x[0], b.next_u64());
        assert_ne!(x[0], c.next_u64());
    }

    #[test]
    fn below_and_f64_stay_in_range() {
        let mut r = Rng::for_actor(1, "t");
        for _ in 0..10_000 {
            assert!(r.below(10) < 10);
            let f = r.next_f64();
            assert!((0.0..1.0).contains(&f));
        }
    }
}
