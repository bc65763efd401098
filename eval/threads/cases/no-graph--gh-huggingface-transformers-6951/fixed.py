# Gradient attribution for a seq2seq model: which input tokens drive the predicted output? The
# model follows the HF layout: forward(input_ids, decoder_input_ids) for training, and a
# generate() that decodes greedily under @torch.no_grad(). The person generates a prediction and
# back-propagates its score to the input embeddings.
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB, DIM = 50, 32


class TinySeq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Embedding(VOCAB, DIM)
        self.encoder = nn.GRU(DIM, DIM, batch_first=True)
        self.decoder = nn.GRU(DIM, DIM, batch_first=True)
        self.lm_head = nn.Linear(DIM, VOCAB)

    def forward(self, inputs_embeds, decoder_input_ids):
        _, h = self.encoder(inputs_embeds)
        out, _ = self.decoder(self.shared(decoder_input_ids), h)
        return self.lm_head(out)

    @torch.no_grad()
    def generate(self, inputs_embeds, max_length=5, output_scores=True):
        ids = torch.zeros(inputs_embeds.shape[0], 1, dtype=torch.long)
        scores = []
        for _ in range(max_length):
            logits = self.forward(inputs_embeds, ids)[:, -1]
            scores.append(logits)
            ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=1)
        return ids, torch.stack(scores, 1)


model = TinySeq2Seq().eval()
input_ids = torch.randint(1, VOCAB, (1, 7))
embeds = model.shared(input_ids).detach().requires_grad_(True)

sequences, _ = model.generate(inputs_embeds=embeds)
scores = model(embeds, sequences[:, :-1])
predicted = scores.max(-1).values.sum()
predicted.backward()
attribution = embeds.grad.norm(dim=-1)
print("attribution per input token", [round(v, 4) for v in attribution[0].tolist()])
