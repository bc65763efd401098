# A sequence-labelling toolkit: seq_w.py rebuilds the LSTM-CRF from the saved arguments, loads the
# checkpoint's state dict and hands the model to a predictor object, whose output_batch() decodes
# every document in batches (apply_model -> CRF scores -> Viterbi) and writes the labels to a file.
import io
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)


class LSTM_CRF(nn.Module):
    def __init__(self, vocab_size, tagset_size, embedding_dim, hidden_dim, rnn_layers, dropout_ratio):
        super().__init__()
        self.tagset_size = tagset_size
        self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=rnn_layers, bidirectional=True)
        self.dropout1 = nn.Dropout(p=dropout_ratio)
        self.dropout2 = nn.Dropout(p=dropout_ratio)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size * tagset_size)

    def forward(self, sentence):
        seq_len, batch_size = sentence.shape
        d_embeds = self.dropout1(self.word_embeds(sentence))
        lstm_out, _ = self.lstm(d_embeds)
        scores = self.hidden2tag(self.dropout2(lstm_out))
        return scores.view(seq_len, batch_size, self.tagset_size, self.tagset_size)


class CRFDecode_vb:
    def __init__(self, tagset_size, start_tag, end_tag):
        self.tagset_size, self.start_tag, self.end_tag = tagset_size, start_tag, end_tag

    def decode(self, scores, mask):
        seq_len, bat_size = scores.shape[:2]
        partition = scores[0, :, self.start_tag, :]
        back_points = []
        for t in range(1, seq_len):
            cur = scores[t] + partition.unsqueeze(2)
            partition, idx = cur.max(1)
            back_points.append(idx)
        pointer = partition.argmax(1)
        decode_idx = [pointer]
        for idx in reversed(back_points):
            pointer = idx.gather(1, pointer.unsqueeze(1)).squeeze(1)
            decode_idx.insert(0, pointer)
        return torch.stack(decode_idx)


class predict:
    def __init__(self, l_map, batch_size=50):
        self.r_l_map = {v: k for k, v in l_map.items()}
        self.batch_size = batch_size

    def decode_l(self, feature, label):
        return '\n'.join(w + ' ' + self.r_l_map[int(y)] for w, y in zip(feature, label))

    def output_batch(self, ner_model, documents, fout):
        d_len = len(documents)
        for d_ind in range(0, d_len):
            fout.write('-DOCSTART- -DOCSTART- -DOCSTART-\n\n')
            features = documents[d_ind]
            f_len = len(features)
            for ind in range(0, f_len, self.batch_size):
                eind = min(f_len, ind + self.batch_size)
                labels = self.apply_model(ner_model, features[ind: eind])
                labels = torch.unbind(labels, 1)
                for ind2 in range(ind, eind):
                    fout.write(self.decode_l(features[ind2], labels[ind2 - ind][0: len(features[ind2])]) + '\n\n')


class predict_w(predict):
    def __init__(self, f_map, l_map, pad_word, pad_label, start_label, batch_size=50, caseless=True):
        predict.__init__(self, l_map, batch_size)
        self.decoder = CRFDecode_vb(len(l_map), start_label, pad_label)
        self.pad_word, self.f_map, self.caseless = pad_word, f_map, caseless

    def apply_model(self, ner_model, features):
        if self.caseless:
            features = [[x.lower() for x in t] for t in features]
        features = [[self.f_map.get(w, self.f_map['<unk>']) for w in t] for t in features]
        f_len = max(len(t) + 1 for t in features)
        masks = torch.tensor([[1] * (len(t) + 1) + [0] * (f_len - len(t) - 1) for t in features], dtype=torch.uint8)
        word_features = torch.tensor([t + [self.pad_word] * (f_len - len(t)) for t in features])
        scores = ner_model(word_features.transpose(0, 1))
        return self.decoder.decode(scores.data, masks.transpose(0, 1))


words = ['<unk>', '<eof>', 'eu', 'rejects', 'german', 'call', 'to', 'boycott', 'british', 'lamb', 'peter', 'blackburn']
f_map = {w: i for i, w in enumerate(words)}
l_map = {'O': 0, 'B-ORG': 1, 'B-MISC': 2, 'B-PER': 3, 'I-PER': 4, '<start>': 5, '<pad>': 6}
jd = {'embedding_dim': 16, 'hidden': 16, 'layers': 1, 'drop_out': 0.55}

with tempfile.TemporaryDirectory() as tmp:
    trained = LSTM_CRF(len(f_map), len(l_map), jd['embedding_dim'], jd['hidden'], jd['layers'], jd['drop_out'])
    torch.save({'state_dict': trained.state_dict(), 'f_map': f_map, 'l_map': l_map}, tmp + '/ner.model')

    checkpoint_file = torch.load(tmp + '/ner.model', map_location=lambda storage, loc: storage)
    ner_model = LSTM_CRF(len(checkpoint_file['f_map']), len(checkpoint_file['l_map']), jd['embedding_dim'], jd['hidden'],
                         jd['layers'], jd['drop_out'])
    ner_model.load_state_dict(checkpoint_file['state_dict'])

    predictor = predict_w(f_map, l_map, f_map['<eof>'], l_map['<pad>'], l_map['<start>'], batch_size=2)
    documents = [[['EU', 'rejects', 'German', 'call'], ['to', 'boycott', 'British', 'lamb'], ['Peter', 'Blackburn']]]
    fout = io.StringIO()
    predictor.output_batch(ner_model, documents, fout)
    output = fout.getvalue()
    print(output)

    # -- corpus check --
    reference = LSTM_CRF(len(f_map), len(l_map), jd['embedding_dim'], jd['hidden'], jd['layers'], jd['drop_out'])
    reference.load_state_dict(checkpoint_file['state_dict'])
    reference.eval()
    expected = io.StringIO()
    with torch.no_grad():
        predictor.output_batch(reference, documents, expected)
    if output != expected.getvalue():
        print("BUG: the predictor labelled the corpus with the LSTM-CRF's dropout active")
