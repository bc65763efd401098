# Training only the visual encoder of a Qwen-VL-style model (language model and lm_head
# frozen through requires_grad): image features are written into the token hidden
# states at the image-pad positions through .data (to avoid an in-place error).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class QWenModel(nn.Module):
    def __init__(self, vocab=50, dim=16, n_img_tokens=4):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.visual = nn.Sequential(nn.Flatten(1), nn.Linear(3 * 8 * 8, n_img_tokens * dim))
        self.drop = nn.Dropout(0.0)
        self.h = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.n_img_tokens, self.dim = n_img_tokens, dim

    def forward(self, input_ids, pixels, img_pos):
        images = self.visual(pixels).view(-1, self.n_img_tokens, self.dim)
        hidden_states = self.wte(input_ids)
        hidden_states = self.drop(hidden_states)
        if images is not None:
            for idx, (i, a, b) in enumerate(img_pos):
                hidden_states.data[i][a + 1 : b] = images.data[idx]
        return self.lm_head(self.h(hidden_states))


model = QWenModel()
# fix the language model and lm_head, train only the visual part
model.requires_grad_(False)
model.visual.requires_grad_(True)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)

input_ids = torch.randint(0, 50, (2, 12))
pixels = torch.rand(2, 3, 8, 8)
img_pos = [(0, 1, 6), (1, 3, 8)]  # (batch index, <img> position, </img> position)
labels = torch.randint(0, 50, (2, 12))

for step in range(3):
    logits = model(input_ids, pixels, img_pos)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
