"""Makes conv2d's fixed inputs and golden output (run from this folder; needs numpy, scipy).

image: 200 x 200 grayscale in [0, 1); mask: 13 x 13, a Gaussian (sigma 3) with noise, summing
to 1. golden: scipy.ndimage.convolve(image, mask, mode="constant", cval=0), computed in
float64 and stored as float32.
"""
import numpy as np
from scipy import ndimage

rng = np.random.default_rng(20261121)
image = rng.random((200, 200), dtype=np.float64).astype(np.float32)
ax = np.arange(13) - 6
gauss = np.exp(-(ax[:, None] ** 2 + ax[None, :] ** 2) / (2 * 3.0**2))
mask = gauss * (1 + 0.2 * rng.standard_normal((13, 13)))
mask = (mask / mask.sum()).astype(np.float32)
golden = ndimage.convolve(image.astype(np.float64), mask.astype(np.float64), mode="constant", cval=0.0)
np.save("image.npy", image)
np.save("mask.npy", mask)
np.save("golden.npy", golden.astype(np.float32))
