# A GPT-style model over tokenized patient timelines: after training, an inference script loads the
# weights and, under @torch.inference_mode(), scores each timeline's probability of the outcome
# token at the next position.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
vocab_size, n_embd, block_size, OUTCOME = 64, 32, 24, 5


class TimelineGPT(nn.Module):
    def __init__(self, dropout=0.3):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(dropout)
        self.block = nn.TransformerEncoderLayer(n_embd, 4, 4 * n_embd, dropout=dropout, batch_first=True)
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx):
        T = idx.size(1)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        x = self.drop(self.tok(idx) + self.pos(torch.arange(T)))
        return self.lm_head(self.block(x, src_mask=mask))


# --- training (train.py) ---
model = TimelineGPT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for it in range(30):
    x = torch.randint(0, vocab_size, (8, block_size))
    logits = model(x[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, vocab_size), x[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
state_dict = model.state_dict()


# --- inference (infer.py) ---
@torch.inference_mode()
def run_inference(model, timelines):
    probs = []
    for timeline in timelines:
        logits = model(timeline.unsqueeze(0))[:, -1]
        probs.append(F.softmax(logits, dim=-1)[0, OUTCOME])
    return torch.stack(probs)


model = TimelineGPT()
model.load_state_dict(state_dict)
model.eval()
timelines = [torch.randint(0, vocab_size, (block_size,)) for _ in range(4)]
outcome_prob = run_inference(model, timelines)
print("P(outcome) per timeline:", outcome_prob)

# -- corpus check --
if not torch.allclose(outcome_prob, run_inference(model, timelines)):
    print("BUG: scoring the same timelines twice gives different outcome probabilities (dropout active)")
