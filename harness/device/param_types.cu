// The query `param_types` appends to a source: `arg<T>::value` codes a parameter type (its base
// type's kind, signedness and size; pointer, pointer to const, pointer to pointer), `sig<F>::c`
// holds a function pointer type's parameter count and codes.
namespace kernelgate_query {
template <class T> struct code { static constexpr unsigned value = 0; };
template <> struct code<float> { static constexpr unsigned value = 1; };
template <> struct code<double> { static constexpr unsigned value = 2; };
#if defined(__CUDA_FP16_TYPES_EXIST__)
template <> struct code<__half> { static constexpr unsigned value = 3; };
#endif
#if defined(__CUDA_BF16_TYPES_EXIST__)
template <> struct code<__nv_bfloat16> { static constexpr unsigned value = 4; };
#endif
template <> struct code<bool> { static constexpr unsigned value = 5; };
template <> struct code<void> { static constexpr unsigned value = 6; };
template <class T> struct sized { static constexpr unsigned value = (T(-1) < T(0) ? 0x10u : 0x20u) + sizeof(T); };
template <> struct code<char> : sized<char> {};
template <> struct code<signed char> : sized<signed char> {};
template <> struct code<unsigned char> : sized<unsigned char> {};
template <> struct code<short> : sized<short> {};
template <> struct code<unsigned short> : sized<unsigned short> {};
template <> struct code<int> : sized<int> {};
template <> struct code<unsigned> : sized<unsigned> {};
template <> struct code<long> : sized<long> {};
template <> struct code<unsigned long> : sized<unsigned long> {};
template <> struct code<long long> : sized<long long> {};
template <> struct code<unsigned long long> : sized<unsigned long long> {};
template <class T> struct code<const T> : code<T> {};
template <class T> struct code<volatile T> : code<T> {};
template <class T> struct code<const volatile T> : code<T> {};
template <class T> struct arg { static constexpr unsigned value = code<T>::value; };
template <class T> struct arg<T*> { static constexpr unsigned value = 0x100u | code<T>::value | (arg<T>::value & 0x100u ? 0x400u : 0u); };
template <class T> struct arg<const T*> { static constexpr unsigned value = 0x300u | code<T>::value | (arg<T>::value & 0x100u ? 0x400u : 0u); };
template <class T> struct arg<const volatile T*> : arg<const T*> {};
template <class F> struct sig { static constexpr unsigned n = 0; static constexpr unsigned c[2] = {~0u, ~0u}; };
template <class... A> struct sig<void (*)(A...)> { static constexpr unsigned n = sizeof...(A); static constexpr unsigned c[] = {n, arg<A>::value..., ~0u}; };
}
