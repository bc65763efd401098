# A seq2seq toolkit: an Evaluator object computes the loss and accuracy of a model on a dataset;
# the SupervisedTrainer uses it on the dev set after each epoch (switching the model to eval
# itself), and a script evaluates a checkpoint it loads with the same Evaluator.
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB, HIDDEN = 12, 16


class Seq2seq(nn.Module):
    def __init__(self, vocab=VOCAB, hidden=HIDDEN, dropout_p=0.4):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.decoder = nn.GRU(hidden, hidden, batch_first=True)
        self.input_dropout = nn.Dropout(dropout_p)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, input_variable, target_variable):
        _, encoder_hidden = self.encoder(self.input_dropout(self.embedding(input_variable)))
        decoder_outputs, _ = self.decoder(self.input_dropout(self.embedding(target_variable[:, :-1])), encoder_hidden)
        return torch.log_softmax(self.out(decoder_outputs), dim=-1)


class NLLLoss:
    def __init__(self):
        self.criterion = nn.NLLLoss(reduction='sum')
        self.reset()

    def reset(self):
        self.acc_loss, self.norm_term = 0.0, 0

    def eval_batch(self, outputs, target):
        self.acc_loss += self.criterion(outputs, target).item()
        self.norm_term += target.numel()

    def get_loss(self):
        return self.acc_loss / max(self.norm_term, 1)


class Evaluator(object):
    def __init__(self, loss=None, batch_size=4):
        self.loss = loss or NLLLoss()
        self.batch_size = batch_size

    def evaluate(self, model, data):
        loss = self.loss
        loss.reset()
        match, total = 0, 0
        sources, targets = data
        for i in range(0, len(sources), self.batch_size):
            input_variables = sources[i:i + self.batch_size]
            target_variables = targets[i:i + self.batch_size]
            decoder_outputs = model(input_variables, target_variables)
            for step in range(decoder_outputs.size(1)):
                step_output = decoder_outputs[:, step]
                target = target_variables[:, step + 1]
                loss.eval_batch(step_output, target)
                match += (step_output.argmax(1) == target).sum().item()
                total += target.numel()
        accuracy = match / total if total else float('nan')
        return loss.get_loss(), accuracy


class SupervisedTrainer(object):
    def __init__(self, expt_dir, batch_size=4):
        self.evaluator = Evaluator(batch_size=batch_size)
        self.expt_dir = expt_dir
        self.batch_size = batch_size

    def train(self, model, data, num_epochs=2, dev_data=None):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        criterion = nn.NLLLoss()
        sources, targets = data
        for epoch in range(num_epochs):
            model.train(True)
            for i in range(0, len(sources), self.batch_size):
                outputs = model(sources[i:i + self.batch_size], targets[i:i + self.batch_size])
                loss = criterion(outputs.reshape(-1, VOCAB), targets[i:i + self.batch_size, 1:].reshape(-1))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            if dev_data is not None:
                model.train(False)
                dev_loss, accuracy = self.evaluator.evaluate(model, dev_data)
                print(f"epoch {epoch}: dev loss {dev_loss:.4f} accuracy {accuracy:.3f}")
        torch.save(model.state_dict(), os.path.join(self.expt_dir, 'checkpoint.pt'))
        return model


def make_data(n):
    src = torch.randint(1, VOCAB, (n, 7))
    tgt = torch.cat([torch.zeros(n, 1, dtype=torch.long), src.flip(1)], dim=1)
    return src, tgt


expt_dir = tempfile.mkdtemp()
train, dev, test = make_data(16), make_data(8), make_data(8)
SupervisedTrainer(expt_dir).train(Seq2seq(), train, dev_data=dev)

seq2seq = Seq2seq()
seq2seq.load_state_dict(torch.load(os.path.join(expt_dir, 'checkpoint.pt')))
evaluator = Evaluator()
test_loss, test_accuracy = evaluator.evaluate(seq2seq, test)
print(f"test loss {test_loss:.4f} accuracy {test_accuracy:.3f}")

# -- corpus check --
reference = Seq2seq()
reference.load_state_dict(torch.load(os.path.join(expt_dir, 'checkpoint.pt')))
reference.eval()
expected_loss, _ = Evaluator().evaluate(reference, test)
if abs(test_loss - expected_loss) > 1e-6:
    print("BUG: the evaluator ran the model with its dropout active")
