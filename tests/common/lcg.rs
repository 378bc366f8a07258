//! `Lcg`: a tiny deterministic generator, so that fuzz and property tests draw the same way on
//! every run (a failure names a case that reproduces).

/// Knuth's MMIX linear congruential generator.
pub struct Lcg(pub u64);

// Each test file uses the draws it needs.
#[allow(dead_code)]
impl Lcg {
    fn step(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }

    /// A number in `0..below` (0 when `below` is 0).
    pub fn next(&mut self, below: usize) -> usize {
        ((self.step() >> 33) as usize) % below.max(1)
    }

    /// A number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.step() >> 11) as f64 / (1u64 << 53) as f64
    }
}
