# chemicalx CASTER: a drug-pair synergy model that encodes the functional substructures of a pair
# of drugs, projects them on a dictionary made by encoding every substructure alone (the rows of
# an identity matrix), and predicts from the projection coefficients. The pipeline trains it on
# the GPU when CUDA is available (the meta device stands in for it); random substructure bit
# vectors stand in for DrugComb, and the loss is reported by shape (meta tensors hold no values).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("meta")  # torch.device("cuda" if torch.cuda.is_available() else "cpu")


class CASTER(nn.Module):
    def __init__(self, drug_channels=64, encoder_hidden_channels=32, encoder_output_channels=16,
                 hidden_channels=(32, 16), out_channels=1, lambda3=1e-5, magnifying_factor=100):
        super().__init__()
        self.drug_channels = drug_channels
        self.lambda3 = lambda3
        self.magnifying_factor = magnifying_factor
        self.encoder = nn.Sequential(nn.Linear(drug_channels, encoder_hidden_channels), nn.ReLU(True),
                                     nn.Linear(encoder_hidden_channels, encoder_output_channels))
        self.decoder = nn.Sequential(nn.Linear(encoder_output_channels, encoder_hidden_channels), nn.ReLU(True),
                                     nn.Linear(encoder_hidden_channels, drug_channels))
        layers = []
        in_channels = drug_channels
        for h in hidden_channels:
            layers += [nn.Linear(in_channels, h), nn.ReLU(True)]
            in_channels = h
        self.predictor = nn.Sequential(*layers, nn.Linear(in_channels, out_channels))

    def forward(self, drug_pair_features):
        drug_pair_features_latent = self.encoder(drug_pair_features)
        dictionary_features_latent = self.encoder(torch.eye(self.drug_channels, device=drug_pair_features.device))
        dictionary_features_latent = dictionary_features_latent.mul(drug_pair_features[:, :, None])
        drug_pair_features_reconstructed = self.decoder(drug_pair_features_latent)
        reconstructed = torch.sigmoid(drug_pair_features_reconstructed)
        dictionary_features_latent_t = dictionary_features_latent.transpose(1, 2)
        gram = torch.bmm(dictionary_features_latent, dictionary_features_latent_t)
        gram = gram + self.lambda3 * torch.eye(self.drug_channels, device=gram.device)
        rhs = torch.bmm(dictionary_features_latent, drug_pair_features_latent[:, :, None])
        projection_coefficients = torch.linalg.solve(gram, rhs).squeeze(-1)
        score = self.predictor(self.magnifying_factor * projection_coefficients)
        return torch.sigmoid(score), reconstructed


model = CASTER().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    left = (torch.rand(16, 64) > 0.8).float()
    right = (torch.rand(16, 64) > 0.8).float()
    drug_pair_features = torch.maximum(left, right).to(device)
    labels = torch.randint(0, 2, (16, 1)).float().to(device)
    prediction, reconstructed = model(drug_pair_features)
    loss = F.binary_cross_entropy(prediction, labels) + F.binary_cross_entropy(reconstructed, drug_pair_features)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {tuple(loss.shape)} on {loss.device.type}")
