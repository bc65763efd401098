# Sentence classification with a text CNN over pre-computed word vectors: a batch of
# 64-word x 100-dim embeddings (loaded with numpy) goes through a Conv2d whose kernel spans two
# words and the whole embedding, then max-over-time pooling and a linear classifier.
import numpy as np
import torch as th

th.manual_seed(0)
np.random.seed(0)

a = th.DoubleTensor(np.random.uniform(size=(32, 1, 64, 100)))
c = a.float()
conv1 = th.nn.Conv2d(in_channels=1, out_channels=123, kernel_size=(2, 100), stride=(1, 1))
fc = th.nn.Linear(123, 2)

b = conv1(c)
features = th.relu(b).squeeze(3).max(dim=2).values
logits = fc(features)
print("logits", tuple(logits.shape), logits.dtype)
