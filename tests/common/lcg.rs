//! `Lcg`: a tiny deterministic generator, so that fuzz tests damage files the same way on every
//! run (a failure names a mutation that reproduces).

/// Knuth's MMIX linear congruential generator.
pub struct Lcg(pub u64);

impl Lcg {
    /// A number in `0..below` (0 when `below` is 0).
    pub fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below.max(1)
    }
}
