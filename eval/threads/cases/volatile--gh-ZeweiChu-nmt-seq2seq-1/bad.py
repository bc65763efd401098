# Seq2seq translation model: evaluate() on the dev set wraps each numpy minibatch in
# Variable(..., volatile=True), as was done before PyTorch 0.4, to avoid building a graph.
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
np.random.seed(0)
vocab, emb, hid = 30, 16, 32


class EncoderDecoderModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.encoder = nn.GRU(emb, hid, batch_first=True)
        self.decoder = nn.GRU(emb, hid, batch_first=True)
        self.out = nn.Linear(hid, vocab)

    def forward(self, x, x_mask, y):
        _, hidden = self.encoder(self.embed(x))
        dec_out, _ = self.decoder(self.embed(y), hidden)
        return torch.log_softmax(self.out(dec_out), dim=-1)


class LanguageModelCriterion(nn.Module):
    def forward(self, input, target, mask):
        output = -input.gather(2, target.unsqueeze(2)).squeeze(2) * mask
        return output.sum() / mask.sum()


def make_minibatches(n, bsz=4, src_len=7, tgt_len=6):
    for _ in range(n):
        mb_x = np.random.randint(1, vocab, (bsz, src_len))
        mb_y = np.random.randint(1, vocab, (bsz, tgt_len))
        yield mb_x, np.ones_like(mb_x, dtype=np.float32), mb_y, np.ones_like(mb_y, dtype=np.float32)


def evaluate(model, data, loss_fn):
    model.eval()
    total_num_words = total_loss = 0.
    for mb_x, mb_x_mask, mb_y, mb_y_mask in data:
        mb_x = Variable(torch.from_numpy(mb_x), volatile=True).long()
        mb_x_mask = Variable(torch.from_numpy(mb_x_mask), volatile=True).long()
        mb_input = Variable(torch.from_numpy(mb_y[:, :-1]), volatile=True).long()
        mb_out = Variable(torch.from_numpy(mb_y[:, 1:]), volatile=True).long()
        mb_out_mask = Variable(torch.from_numpy(mb_y_mask[:, 1:]), volatile=True)
        mb_pred = model(mb_x, mb_x_mask, mb_input)
        loss = loss_fn(mb_pred, mb_out, mb_out_mask)
        num_words = torch.sum(mb_out_mask).item()
        total_loss += loss.item() * num_words
        total_num_words += num_words
    print("dev loss", total_loss / total_num_words)


model = EncoderDecoderModel()
print("start evaluating on dev...")
evaluate(model, make_minibatches(3), LanguageModelCriterion())
