# "View Image for Python Debugging" (VS Code extension): while the debugger is paused, the
# extension's python side slices a batched tensor (at most max_size_bytes of batch items), turns it
# into a numpy array and packs it with its shape, batch info and per-channel stats into a message
# for the webview. Here the user pauses inside a training loop and views the conv feature maps.
# The socket is left out: the packed message is returned and its size printed.
import struct

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
StatsType = np.float32
DimType = np.uint32


def array_stats(array):
    if array.ndim == 4 and array.shape[1] <= 4:
        return {"min": StatsType(np.nanmin(array, axis=(0, 2, 3))), "max": StatsType(np.nanmax(array, axis=(0, 2, 3)))}
    return {"min": [StatsType(np.nanmin(array))], "max": [StatsType(np.nanmax(array))]}


def create_numpy_message(array, is_batched=None, batch_size=None, batch_item_start=None, batch_item_stop=None):
    stats = array_stats(array)
    array_shape = np.array(array.shape, dtype=DimType)
    header = struct.pack(f"!B{len(array_shape)}IBIII", len(array_shape), *array_shape, bool(is_batched),
                         batch_size or 1, batch_item_start or 0, batch_item_stop or 1)
    stats_bytes = np.concatenate([np.atleast_1d(stats["min"]), np.atleast_1d(stats["max"])]).astype(np.float32).tobytes()
    return header + stats_bytes + array.astype(np.float32).tobytes("C")


def create_tensor_message(tensor, options):
    options = options or {}
    MB = 1024 * 1024

    arr_element_size = tensor.element_size()
    num_elements_per_batch_item = tensor[0].numel()
    arr_size_bytes = arr_element_size * tensor.numel()
    max_size_bytes = min(options.get("max_size_bytes", 1 * MB), arr_size_bytes)
    num_bytes_per_batch_item = arr_element_size * num_elements_per_batch_item
    max_num_items_to_send = max(1, max_size_bytes // num_bytes_per_batch_item)

    batch_size = tensor.shape[0]
    start = options.get("start", 0)
    stop = options.get("stop", start + max_num_items_to_send)

    sliced_tensor = tensor[start:stop]
    if isinstance(sliced_tensor, torch.Tensor):
        sliced_tensor = sliced_tensor.detach().cpu().numpy()

    return create_numpy_message(sliced_tensor, is_batched=True, batch_size=batch_size,
                                batch_item_start=start, batch_item_stop=stop)


# -- the user's training loop, paused at a breakpoint to look at the feature maps --
backbone = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
optimizer = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.1)
for step in range(2):
    images, labels = torch.rand(8, 3, 16, 16), torch.randint(0, 2, (8,))
    feats = backbone(images)
    if step == 1:  # breakpoint: "view image" on feats
        message = create_tensor_message(feats, {"max_size_bytes": 4 * 4 * 16 * 16 * 2})
        print("sent", len(message), "bytes to the webview")
    loss = nn.functional.cross_entropy(head(feats), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, "loss", round(loss.item(), 4))
