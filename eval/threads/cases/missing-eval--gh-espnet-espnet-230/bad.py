# End-to-end speech recognition (PyTorch backend): an attention encoder-decoder decodes with beam
# search and shallow fusion of a character RNNLM.  recog() loads the acoustic model and the RNNLM
# from their files; E2E.recognize switches its own network to eval mode, and receives the RNNLM
# as an argument to score each extension of the beam.
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CHAR_LIST = ["<blank>", "a", "b", "c", "d", "e", "<space>", "<eos>"]


class RNNLM(nn.Module):
    def __init__(self, n_vocab, n_units):
        super().__init__()
        self.embed = nn.Embedding(n_vocab, n_units)
        self.l1 = nn.LSTMCell(n_units, n_units)
        self.l2 = nn.LSTMCell(n_units, n_units)
        self.lo = nn.Linear(n_units, n_vocab)
        self.d0 = nn.Dropout(0.5)
        self.d1 = nn.Dropout(0.5)
        self.d2 = nn.Dropout(0.5)
        self.n_units = n_units

    def zero_state(self, batchsize):
        return torch.zeros(batchsize, self.n_units)

    def forward(self, state, x):
        if state is None:
            state = {'c1': self.zero_state(x.size(0)), 'h1': self.zero_state(x.size(0)),
                     'c2': self.zero_state(x.size(0)), 'h2': self.zero_state(x.size(0))}
        h0 = self.embed(x)
        h1, c1 = self.l1(self.d0(h0), (state['h1'], state['c1']))
        h2, c2 = self.l2(self.d1(h1), (state['h2'], state['c2']))
        y = self.lo(self.d2(h2))
        return {'c1': c1, 'h1': h1, 'c2': c2, 'h2': h2}, y


class ClassifierWithState(nn.Module):
    def __init__(self, predictor):
        super().__init__()
        self.predictor = predictor

    def predict(self, state, x):
        state, z = self.predictor(state, x)
        return state, F.log_softmax(z, dim=1)


class E2E(nn.Module):
    def __init__(self, idim, odim, hdim=16):
        super().__init__()
        self.enc = nn.LSTM(idim, hdim, batch_first=True)
        self.dec_embed = nn.Embedding(odim, hdim)
        self.dec = nn.LSTMCell(2 * hdim, hdim)
        self.att = nn.Linear(hdim, hdim)
        self.out = nn.Linear(hdim, odim)
        self.dropout = nn.Dropout(0.3)
        self.hdim = hdim

    def recognize(self, x, recog_args, char_list, rnnlm=None):
        prev = self.training
        self.eval()
        h, _ = self.enc(x.unsqueeze(0))
        h = h.squeeze(0)
        eos = len(char_list) - 1
        beam = [{'score': 0.0, 'yseq': [eos], 'z': (torch.zeros(1, self.hdim), torch.zeros(1, self.hdim)),
                 'rnnlm_prev': None}]
        ended = []
        for _ in range(recog_args['maxlen']):
            new_beam = []
            for hyp in beam:
                z_prev = hyp['z'][0]
                w = torch.softmax(h @ self.att(z_prev).squeeze(0), dim=0)
                ctx = (w.unsqueeze(1) * h).sum(0, keepdim=True)
                ey = self.dropout(self.dec_embed(torch.tensor([hyp['yseq'][-1]])))
                z = self.dec(torch.cat([ey, ctx], dim=1), hyp['z'])
                local_scores = F.log_softmax(self.out(self.dropout(z[0])), dim=1)
                if rnnlm is not None:
                    rnnlm_state, z_rnnlm = rnnlm.predict(hyp['rnnlm_prev'], torch.tensor([hyp['yseq'][-1]]))
                    local_scores = local_scores + recog_args['lm_weight'] * z_rnnlm
                else:
                    rnnlm_state = None
                best_scores, best_ids = local_scores[0].topk(recog_args['beam_size'])
                for s, c in zip(best_scores.tolist(), best_ids.tolist()):
                    new_beam.append({'score': hyp['score'] + s, 'yseq': hyp['yseq'] + [c], 'z': z,
                                     'rnnlm_prev': rnnlm_state})
            new_beam.sort(key=lambda hyp: hyp['score'], reverse=True)
            beam = []
            for hyp in new_beam[:recog_args['beam_size']]:
                (ended if hyp['yseq'][-1] == eos else beam).append(hyp)
            if not beam:
                break
        ended.extend(beam)
        if prev:
            self.train()
        return sorted(ended, key=lambda hyp: hyp['score'], reverse=True)[:recog_args['nbest']]


def recog(args, feats):
    e2e = E2E(args['idim'], len(CHAR_LIST))
    e2e.load_state_dict(torch.load(args['model']))

    # read rnnlm
    if args['rnnlm']:
        rnnlm = ClassifierWithState(RNNLM(len(CHAR_LIST), 16))
        rnnlm.load_state_dict(torch.load(args['rnnlm']))
    else:
        rnnlm = None

    results = {}
    with torch.no_grad():
        for name, feat in feats.items():
            nbest_hyps = e2e.recognize(feat, args, CHAR_LIST, rnnlm)
            results[name] = nbest_hyps[0]
    return results, rnnlm


outdir = tempfile.mkdtemp()
args = {'idim': 10, 'model': os.path.join(outdir, 'model.acc.best'), 'rnnlm': os.path.join(outdir, 'rnnlm.model.best'),
        'beam_size': 3, 'nbest': 1, 'maxlen': 6, 'lm_weight': 0.5}
torch.save(E2E(10, len(CHAR_LIST)).state_dict(), args['model'])
torch.save(ClassifierWithState(RNNLM(len(CHAR_LIST), 16)).state_dict(), args['rnnlm'])
feats = {'utt1': torch.randn(12, 10), 'utt2': torch.randn(9, 10)}
results, rnnlm = recog(args, feats)
for name, hyp in results.items():
    print(name, ''.join(CHAR_LIST[c] for c in hyp['yseq'][1:]), round(hyp['score'], 3))

# -- corpus check --
reference_lm = ClassifierWithState(RNNLM(len(CHAR_LIST), 16))
reference_lm.load_state_dict(torch.load(args['rnnlm']))
reference_lm.eval()
reference_e2e = E2E(args['idim'], len(CHAR_LIST))
reference_e2e.load_state_dict(torch.load(args['model']))
with torch.no_grad():
    expected = {name: reference_e2e.recognize(feat, args, CHAR_LIST, reference_lm)[0] for name, feat in feats.items()}
if any(abs(results[name]['score'] - expected[name]['score']) > 1e-5 for name in feats):
    print("BUG: the RNNLM scored the beam in training mode (its dropout was active)")
