# HW7 extractive question answering: a BERT-like model returns an output object with start/end
# logits and the loss; the training loop sums the loss and the accuracy for the logging step.
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BertForQuestionAnswering(nn.Module):
    def __init__(self, vocab=50, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(hidden, 4, 64, batch_first=True), 1)
        self.qa_outputs = nn.Linear(hidden, 2)

    def forward(self, input_ids, start_positions, end_positions):
        logits = self.qa_outputs(self.encoder(self.embed(input_ids)))
        start_logits, end_logits = logits.unbind(-1)
        loss = (F.cross_entropy(start_logits, start_positions) + F.cross_entropy(end_logits, end_positions)) / 2
        return SimpleNamespace(loss=loss, start_logits=start_logits, end_logits=end_logits)


model = BertForQuestionAnswering()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
train_loader = [(torch.randint(0, 50, (4, 24)), torch.randint(0, 24, (4,)), torch.randint(0, 24, (4,)))
                for _ in range(6)]
logging_step = 3
logged = []
model.train()
for epoch in range(1):
    step = 1
    train_loss = train_acc = 0
    for data in train_loader:
        output = model(input_ids=data[0], start_positions=data[1], end_positions=data[2])
        start_index = torch.argmax(output.start_logits, dim=1)
        end_index = torch.argmax(output.end_logits, dim=1)
        train_acc += ((start_index == data[1]) & (end_index == data[2])).float().mean()
        train_loss += output.loss.item()
        output.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        step += 1
        if step % logging_step == 0:
            print(f"Epoch {epoch + 1} | Step {step} | loss = {train_loss / logging_step:.3f}, acc = {train_acc / logging_step:.3f}")
            logged.append(train_loss)
            train_loss = train_acc = 0

# -- corpus check --
if any(torch.is_tensor(v) and v.grad_fn is not None for v in logged):
    print("BUG: train_loss keeps the autograd graph of every step since the last log")
