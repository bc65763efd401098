# A manga translator's text detector: detectors are async model wrappers (load / forward), and the
# comic text detector's _forward is decorated with @torch.no_grad(). Very tall pages are cut into
# square patches by a utility that calls back the detector's batch function on each batch.
import asyncio
from typing import Callable, Tuple

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def det_rearrange_forward(img: np.ndarray, batch_forward: Callable[[np.ndarray, str], Tuple[np.ndarray, np.ndarray]],
                          tgt_size: int = 32, max_batch_size: int = 4, device='cpu'):
    h, w = img.shape[:2]
    if h / w < 3:
        return None, None  # no rearrangement needed
    patches = [img[t:t + tgt_size, :tgt_size] for t in range(0, h - tgt_size + 1, tgt_size)]
    lines_lst, mask_lst = [], []
    for start in range(0, len(patches), max_batch_size):
        lines, mask = batch_forward(np.stack(patches[start:start + max_batch_size]), device)
        lines_lst.append(lines)
        mask_lst.append(mask)
    lines_map = np.concatenate(list(np.concatenate(lines_lst)), axis=1)[None]  # n c h w -> 1 c (n h) w
    mask = np.concatenate(list(np.concatenate(mask_lst)), axis=1)[None]
    return lines_map, mask


class TextDetBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.1))
        self.blk_head = nn.Conv2d(8, 6, 1)
        self.seg_head = nn.Conv2d(8, 1, 1)
        self.db_head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        feats = self.backbone(x)
        return self.blk_head(feats), torch.sigmoid(self.seg_head(feats)), torch.sigmoid(self.db_head(feats))


class ModelWrapper:
    async def load(self, device: str):
        await self._load(device)

    async def forward(self, *args, **kwargs):
        return await self._forward(*args, **kwargs)


class OfflineDetector(ModelWrapper):
    async def detect(self, image: np.ndarray, detect_size: int, det_rearrange_max_batches: int):
        return await self.forward(image, detect_size, det_rearrange_max_batches)


class ComicTextDetector(OfflineDetector):
    async def _load(self, device: str, input_size=32):
        self.device = device
        self.model = TextDetBase().to(device)
        self.input_size = (input_size, input_size)

    def det_batch_forward_ctd(self, batch: np.ndarray, device: str) -> Tuple[np.ndarray, np.ndarray]:
        batch = np.ascontiguousarray((batch.astype(np.float32) / 255.).transpose(0, 3, 1, 2))
        batch = torch.from_numpy(batch).to(device)
        _, mask, lines = self.model(batch)
        mask = mask.cpu().numpy()
        lines = lines.cpu().numpy()
        return lines, mask

    @torch.no_grad()
    async def _forward(self, image: np.ndarray, detect_size: int, det_rearrange_max_batches: int):
        lines_map, mask = det_rearrange_forward(image, self.det_batch_forward_ctd, self.input_size[0],
                                                det_rearrange_max_batches, self.device)
        if lines_map is None:
            _, mask, lines_map = self.model(torch.from_numpy(image.astype(np.float32) / 255.).permute(2, 0, 1)[None])
            mask, lines_map = mask.numpy(), lines_map.numpy()
        text_mask = (mask.squeeze() > 0.5).astype(np.uint8) * 255
        scores = lines_map[0, 0]
        return int((scores > 0.5).sum()), text_mask


async def main():
    detector = ComicTextDetector()
    await detector.load('cpu')
    page = np.random.RandomState(0).randint(0, 255, size=(160, 32, 3)).astype(np.uint8)  # a tall webtoon strip
    n_text_pixels, text_mask = await detector.detect(page, detect_size=32, det_rearrange_max_batches=2)
    print('text pixels', n_text_pixels, 'mask', text_mask.shape)


asyncio.run(main())
