
__device__ __forceinline__ unsigned long long kg_splitmix64(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
__device__ __forceinline__ unsigned long long kg_bits(unsigned long long stream, unsigned long long i) {
    return kg_splitmix64(stream + (i + 1ull) * 0x9E3779B97F4A7C15ull);
}
__device__ __forceinline__ double kg_unit(unsigned long long stream, unsigned long long i) {
    return (double)(kg_bits(stream, i) >> 11) * (1.0 / 9007199254740992.0);
}
__device__ __forceinline__ unsigned long long kg_substream(unsigned long long stream, unsigned long long k) {
    return kg_splitmix64(stream ^ (k * 0xD1B54A32D192ED03ull));
}
__device__ double kg_ln(double x) {
    unsigned long long bits = (unsigned long long)__double_as_longlong(x);
    long long e = (long long)((bits >> 52) & 0x7ffull) - 1023;
    double m = __longlong_as_double((long long)((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull));
    if (m > 1.4142135623730951) { m = m * 0.5; e += 1; }
    double s = (m - 1.0) / (m + 1.0);
    double s2 = s * s;
    double p = 0.0;
    for (int k = 11; k >= 0; --k) p = p * s2 + 1.0 / (double)(2 * k + 1);
    return (double)e * 0.6931471805599453 + 2.0 * s * p;
}
__device__ double kg_cos_turns(double u) {
    const double c[13] = {1.0, -0.5, 0.041666666666666664, -0.001388888888888889,
        2.48015873015873e-05, -2.755731922398589e-07, 2.08767569878681e-09,
        -1.1470745597729725e-11, 4.779477332387385e-14, -1.5619206968586225e-16,
        4.110317623312165e-19, -8.896791392450574e-22, 1.6117375710961184e-24};
    double v = u >= 0.5 ? 1.0 - u : u;
    double sign = 1.0;
    if (v > 0.25) { v = 0.5 - v; sign = -1.0; }
    double x = 6.283185307179586 * v;
    double x2 = x * x;
    double p = 0.0;
    for (int k = 12; k >= 0; --k) p = p * x2 + c[k];
    return sign * p;
}
__device__ double kg_normal(unsigned long long stream, unsigned long long i) {
    double u1 = 1.0 - kg_unit(kg_substream(stream, 1ull), i);
    double u2 = kg_unit(kg_substream(stream, 2ull), i);
    return sqrt(-2.0 * kg_ln(u1)) * kg_cos_turns(u2);
}
__device__ long long kg_integer(unsigned long long stream, unsigned long long i, long long lo, long long hi) {
    unsigned long long span = (unsigned long long)hi - (unsigned long long)lo + 1ull;
    unsigned long long b = kg_bits(stream, i);
    unsigned long long offset = span == 0ull ? b : __umul64hi(b, span);
    return (long long)((unsigned long long)lo + offset);
}
