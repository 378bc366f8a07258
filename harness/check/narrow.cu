
__device__ __forceinline__ double kg_pow2(long long k) {
    return __longlong_as_double((1023ll + k) << 52);
}
__device__ unsigned short kg_narrow(double v, long long mbits, long long bias) {
    unsigned short sign = (unsigned short)(((unsigned long long)__double_as_longlong(v) >> 48) & 0x8000ull);
    double a = fabs(v);
    unsigned short exp_mask = (unsigned short)((2 * bias + 1) << mbits);
    if (isnan(a)) return sign | exp_mask | (unsigned short)(1 << (mbits - 1));
    if (a >= (2.0 - kg_pow2(-(mbits + 1))) * kg_pow2(bias)) return sign | exp_mask;
    long long emin = 1 - bias;
    if (a < kg_pow2(emin)) {
        double m = rint(a * kg_pow2(mbits - emin));
        return sign | (unsigned short)m;
    }
    long long e = (long long)(((unsigned long long)__double_as_longlong(a) >> 52) & 0x7ffull) - 1023;
    double m = rint(a * kg_pow2(mbits - e));
    return sign | (unsigned short)(((e + bias) << mbits) + ((long long)m - (1ll << mbits)));
}
