// out = transpose(in) for an n x n matrix of floats, row-major.
#define TILE 32
#define ROWS 8

// Reference: reads are coalesced, writes stride by n.
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int n) {
    int x = blockIdx.x * TILE + threadIdx.x;
    int y0 = blockIdx.y * TILE + threadIdx.y;
    for (int y = y0; y < y0 + TILE && y < n; y += ROWS) {
        if (x < n) out[x * n + y] = in[y * n + x];
    }
}

// Through a shared-memory tile padded by one column, so the column reads hit 32 banks.
extern "C" __global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        if (x < n && y + j < n) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
