# HNE's R-GCN baseline in supervised mode on a multi-label dataset (Yelp): main() samples a
# subgraph and the labels of the training nodes in it (a multi-hot numpy array when `multi`),
# turns them into a tensor, and TrainModel.get_supervised_loss() picks BCE on sigmoid outputs
# for multi-label data and NLL for single-label data. A dense per-relation adjacency stands in
# for the DGL graph; random graphs and labels stand in for the dataset.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

np.random.seed(1)
torch.manual_seed(1)


class RGCNLayer(nn.Module):
    def __init__(self, in_feat, out_feat, num_rels, activation=None):
        super(RGCNLayer, self).__init__()
        self.weight = nn.Parameter(torch.randn(num_rels, in_feat, out_feat) * 0.1)
        self.loop_weight = nn.Linear(in_feat, out_feat)
        self.activation = activation

    def forward(self, adj, h):
        out = self.loop_weight(h) + torch.einsum('rij,jf,rfo->io', adj, h, self.weight)
        return self.activation(out) if self.activation else out


class TrainModel(nn.Module):
    def __init__(self, num_nodes, h_dim, num_rels, nlabel, reg_param=0.01):
        super(TrainModel, self).__init__()
        self.embedding = nn.Embedding(num_nodes, h_dim)
        self.layers = nn.ModuleList([RGCNLayer(h_dim, h_dim, num_rels, F.relu), RGCNLayer(h_dim, h_dim, num_rels)])
        self.reg_param = reg_param
        self.supervised = nlabel > 0
        self.LinearLayer = nn.Linear(h_dim, nlabel)

    def forward(self, adj, node_id):
        h = self.embedding(node_id)
        for layer in self.layers:
            h = layer(adj, h)
        return h, self.LinearLayer(h)

    def supervised_regularization_loss(self, embedding):
        return torch.mean(embedding.pow(2))

    def get_supervised_loss(self, embed, matched_labels, matched_index, multi):
        if multi:
            predict_loss = F.binary_cross_entropy(torch.sigmoid(embed[matched_index]), matched_labels)
        else:
            predict_loss = F.nll_loss(F.log_softmax(embed[matched_index], dim=1), matched_labels)
        reg_loss = self.supervised_regularization_loss(embed)
        return predict_loss + self.reg_param * reg_loss


def generate_sampled_graph_and_labels_supervised(num_nodes, num_rels, train_labels, multi, batch=12):
    node_id = np.random.choice(num_nodes, batch, replace=False)
    adj = (np.random.rand(num_rels, batch, batch) < 0.3).astype(np.float32)
    adj /= np.maximum(adj.sum(axis=2, keepdims=True), 1)
    matched_index = np.arange(batch // 2)
    matched_labels = train_labels[node_id[matched_index]]
    return adj, node_id, matched_labels, matched_index


def main(multi=True, num_nodes=40, num_rels=3, nlabels=4, n_epochs=3):
    if multi:
        train_labels = (np.random.rand(num_nodes, nlabels) < 0.4).astype(np.int64)
    else:
        train_labels = np.random.randint(0, nlabels, size=num_nodes)
    model = TrainModel(num_nodes, 16, num_rels, nlabels)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(n_epochs):
        model.train()
        adj, node_id, matched_labels, matched_index = generate_sampled_graph_and_labels_supervised(
            num_nodes, num_rels, train_labels, multi)
        if multi: matched_labels = torch.from_numpy(matched_labels).float()
        else: matched_labels = torch.from_numpy(matched_labels).long()
        node_id = torch.from_numpy(node_id).long()
        adj = torch.from_numpy(adj)

        embed, pred = model(adj, node_id)
        loss = model.get_supervised_loss(pred, matched_labels, matched_index, multi)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        print("Epoch {:05d} | Loss {:.4f}".format(epoch, loss.item()))


if __name__ == '__main__':
    main(multi=True)
