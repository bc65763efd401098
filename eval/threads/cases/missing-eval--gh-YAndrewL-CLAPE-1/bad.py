# Binding-site prediction: a protein language model embeds each sequence, and a 1-D CNN with
# BatchNorm scores every residue.  The Clape object (a plain class, not a module) loads the CNN's
# weights for a ligand and predicts the sites of each sequence of a FASTA file.
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)
EMBED = 32


class CNNOD(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(EMBED, 32, kernel_size=7, stride=1, padding=3)
        self.norm1 = nn.BatchNorm1d(32)
        self.conv2 = nn.Conv1d(32, 16, kernel_size=5, stride=1, padding=2)
        self.norm2 = nn.BatchNorm1d(16)
        self.conv3 = nn.Conv1d(16, 2, kernel_size=5, stride=1, padding=2)
        self.head = nn.Softmax(-1)
        self.act = nn.ReLU()

    def forward(self, x):
        x = x.permute(0, 2, 1)
        x = self.act(self.norm1(self.conv1(x)))
        x = self.act(self.norm2(self.conv2(x)))
        x = self.conv3(x)
        x = x.permute(0, 2, 1)
        return self.head(x)


class Clape(object):
    def __init__(self, model_path, ligand, threshold: float = 0.5):
        if threshold > 1 or threshold < 0:
            raise ValueError("Threshold is out of range.")
        self.threshold = threshold
        self.ligand = ligand
        self.model_path = model_path
        self.embedding = torch.randn(25, EMBED)  # stands in for the pretrained protein language model
        self.model = self._load_model(ligand)

    def _seq_embedding(self, seq):
        return self.embedding[torch.tensor([ord(c) % 25 for c in seq])]

    def _load_model(self, lig):
        model = CNNOD()
        model.load_state_dict(torch.load(os.path.join(self.model_path, lig + ".pth")))
        return model

    def predict(self, seqs, keep_score=False):
        features = [self._seq_embedding(s).unsqueeze(0) for s in seqs]
        results, scores = [], []
        print(f"=====Predicting {self.ligand}-binding sites=====")
        for f in features:
            score = self.model(f).squeeze(0).detach()[:, 1]
            out = ''.join(str(1) if x > self.threshold else str(0) for x in score)
            results.append(out)
            scores.append(score)
        print("=========Finished!=========")
        if keep_score:
            return scores, results
        return results


def train_weights(folder, ligand):
    model = CNNOD()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(8, 20, EMBED), torch.randint(0, 2, (8, 20))
    for _ in range(5):
        optimizer.zero_grad()
        loss = nn.functional.nll_loss(model(x).log().reshape(-1, 2), y.reshape(-1))
        loss.backward()
        optimizer.step()
    torch.save(model.state_dict(), os.path.join(folder, ligand + ".pth"))


folder = tempfile.mkdtemp()
train_weights(folder, "DNA")
predictor = Clape(folder, "DNA")
seqs = ["MKTAYIAKQRQISFVKSHFSRQ", "GSHMLEDPVDAFQLATQ"]
scores, results = predictor.predict(seqs, keep_score=True)
print(results)

# -- corpus check --
reference = CNNOD()
reference.load_state_dict(torch.load(os.path.join(folder, "DNA.pth")))
reference.eval()
with torch.no_grad():
    expected = [reference(predictor._seq_embedding(s).unsqueeze(0)).squeeze(0)[:, 1] for s in seqs]
if any(not torch.allclose(s, e, atol=1e-5) for s, e in zip(scores, expected)):
    print("BUG: the binding sites were predicted with BatchNorm in training mode")
