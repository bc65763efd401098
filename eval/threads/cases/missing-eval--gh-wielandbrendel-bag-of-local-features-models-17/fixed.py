# BagNet example notebook: a (pretrained) bag-of-local-features ResNet with BatchNorm classifies
# small image patches; generate_heatmap_pytorch() slides over the image, runs batches of patches
# through the model and keeps the target class logit of each patch as the heatmap.
import copy

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def bagnet8(num_classes=10):
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        nn.Conv2d(16, 32, 3, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, num_classes))


def generate_heatmap_pytorch(model, image, target, patchsize, batch_size=16):
    with torch.no_grad():
        image = torch.from_numpy(image).float()
        padded = nn.functional.pad(image, (patchsize // 2, patchsize // 2 - 1, patchsize // 2, patchsize // 2 - 1))
        patches = padded.unfold(2, patchsize, 1).unfold(3, patchsize, 1)
        _, c, h, w, _, _ = patches.shape
        patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(-1, c, patchsize, patchsize)
        logits_list = []
        for batch_patches in torch.split(patches, batch_size):
            logits = model(batch_patches)
            logits_list.append(logits[:, target])
        logits = torch.cat(logits_list)
        return logits.view(h, w).numpy()


pytorch_model = bagnet8()
# "pretrained" weights: a few steps on random patches so the batch-norm statistics are not defaults
opt = torch.optim.SGD(pytorch_model.parameters(), lr=0.01)
for _ in range(5):
    loss = nn.functional.cross_entropy(pytorch_model(torch.rand(16, 3, 8, 8) * 2 + 1), torch.randint(0, 10, (16,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

pytorch_model.eval()
original = np.random.RandomState(0).rand(1, 3, 12, 12).astype(np.float32)
heatmap = generate_heatmap_pytorch(pytorch_model, original, target=3, patchsize=8)
print(heatmap.shape, float(heatmap.mean()))

# -- corpus check --
reference = copy.deepcopy(pytorch_model).eval()
expected = generate_heatmap_pytorch(reference, original, target=3, patchsize=8)
if not np.allclose(heatmap, expected, atol=1e-5):
    print("BUG: the heatmap was computed with BatchNorm in training mode (batch statistics of the patches)")
