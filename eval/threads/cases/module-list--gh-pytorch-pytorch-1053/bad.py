# CNN sentence classifier with three Conv1d filters of widths 3/4/5 kept in a list attribute;
# the model is then moved to the GPU (the meta device stands in for CUDA here).
import torch
import torch.nn as nn

torch.manual_seed(0)
WORD_VEC_SIZE, NUM_CLASSES = 16, 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1d = [
            nn.Conv1d(WORD_VEC_SIZE, 1, 3),
            nn.Conv1d(WORD_VEC_SIZE, 1, 4),
            nn.Conv1d(WORD_VEC_SIZE, 1, 5),
        ]
        self.fc = nn.Linear(3, NUM_CLASSES)

    def forward(self, x):  # x: (batch, WORD_VEC_SIZE, sentence_length)
        pooled = [conv(x).max(dim=2)[0] for conv in self.conv1d]
        return self.fc(torch.cat(pooled, dim=1))


a = Net()
print(a)
device = torch.device("meta")  # stands for torch.device("cuda")
a.to(device)
sentences = torch.randn(8, WORD_VEC_SIZE, 12, device=device)
out = a(sentences)

# -- corpus check --
stranded = [conv for conv in a.conv1d if conv.weight.device != device]
if stranded:
    print(f"BUG: {len(stranded)} Conv1d layers stayed on {stranded[0].weight.device} after a.to({device})")
