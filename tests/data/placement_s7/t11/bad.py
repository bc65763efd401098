import numpy as np
import torch
from torch import nn

images = np.random.randint(0, 256, (4, 16, 16, 3), dtype=np.uint8)
batch = torch.from_numpy(images / 255.0).permute(0, 3, 1, 2)
conv = nn.Conv2d(3, 8, 3)
print(conv(batch).shape)
