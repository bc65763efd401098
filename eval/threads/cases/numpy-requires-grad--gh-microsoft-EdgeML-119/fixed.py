# A library of tiny on-device models: the Bonsai tree model keeps its parameters W, V, Z, T as
# nn.Parameters, and BonsaiTrainer runs dense training, then iterative hard thresholding (IHT) in the
# middle third of training, then sparse retraining on the support that IHT kept.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


# ---- edgeml utils ----
def hardThreshold(A: torch.Tensor, s):
    '''Hard thresholds A with sparsity s'''
    A_ = A.data.cpu().detach().numpy().ravel()
    if len(A_) > 0:
        th = np.percentile(np.abs(A_), (1 - s) * 100.0, method='higher')
        A_[np.abs(A_) < th] = 0.0
    A_ = A_.reshape(A.shape)
    return torch.tensor(A_, requires_grad=True)


def copySupport(src, dst):
    '''zero out entries in dst.data that are zeros in src tensor'''
    zeroSupport = (src.view(-1) == 0.0).nonzero()
    dst = dst.reshape(-1)
    dst[zeroSupport] = 0
    return dst.reshape(src.shape)


class Bonsai(nn.Module):
    def __init__(self, numClasses, dataDimension, projectionDimension, treeDepth, sigma):
        super().__init__()
        self.numClasses, self.treeDepth, self.sigma = numClasses, treeDepth, sigma
        self.internalNodes = 2 ** treeDepth - 1
        totalNodes = 2 * self.internalNodes + 1
        self.Z = nn.Parameter(torch.randn(projectionDimension, dataDimension) * 0.1)
        self.W = nn.Parameter(torch.randn(numClasses * totalNodes, projectionDimension) * 0.1)
        self.V = nn.Parameter(torch.randn(numClasses * totalNodes, projectionDimension) * 0.1)
        self.T = nn.Parameter(torch.randn(self.internalNodes, projectionDimension) * 0.1)

    def forward(self, X):
        XZ = X @ self.Z.t()
        W = self.W.view(-1, self.numClasses, XZ.shape[1])
        V = self.V.view(-1, self.numClasses, XZ.shape[1])
        scores = torch.einsum('bp,ncp->bnc', XZ, W) * torch.tanh(self.sigma * torch.einsum('bp,ncp->bnc', XZ, V))
        gate = torch.sigmoid(XZ @ self.T.t()).mean(dim=1, keepdim=True)
        return (scores.mean(dim=1) * (1 + gate))


class BonsaiTrainer:
    def __init__(self, bonsaiObj, sW, sT, sV, sZ, learningRate, device=None):
        self.bonsaiObj = bonsaiObj
        self.sW, self.sV, self.sT, self.sZ = sW, sV, sT, sZ
        self.device = "cpu" if device is None else device
        self.optimizer = torch.optim.Adam(self.bonsaiObj.parameters(), lr=learningRate)
        self.isDenseTraining = sW > 0.99 and sV > 0.99 and sZ > 0.99 and sT > 0.99

    def runHardThrsd(self):
        '''Function to run the IHT routine on Bonsai Obj'''
        currW = self.bonsaiObj.W.data
        currV = self.bonsaiObj.V.data
        currZ = self.bonsaiObj.Z.data
        currT = self.bonsaiObj.T.data

        __thrsdW = hardThreshold(currW.cpu(), self.sW)
        __thrsdV = hardThreshold(currV.cpu(), self.sV)
        __thrsdZ = hardThreshold(currZ.cpu(), self.sZ)
        __thrsdT = hardThreshold(currT.cpu(), self.sT)

        self.bonsaiObj.W.data = torch.FloatTensor(__thrsdW).to(self.device)
        self.bonsaiObj.V.data = torch.FloatTensor(__thrsdV).to(self.device)
        self.bonsaiObj.Z.data = torch.FloatTensor(__thrsdZ).to(self.device)
        self.bonsaiObj.T.data = torch.FloatTensor(__thrsdT).to(self.device)

        self.__thrsdW = torch.FloatTensor(__thrsdW.clone()).to(self.device)
        self.__thrsdV = torch.FloatTensor(__thrsdV.clone()).to(self.device)
        self.__thrsdZ = torch.FloatTensor(__thrsdZ.clone()).to(self.device)
        self.__thrsdT = torch.FloatTensor(__thrsdT.clone()).to(self.device)

    def runSparseTraining(self):
        '''Function to run the Sparse Retraining routine on Bonsai Obj'''
        self.bonsaiObj.W.data = copySupport(self.__thrsdW, self.bonsaiObj.W.data)
        self.bonsaiObj.V.data = copySupport(self.__thrsdV, self.bonsaiObj.V.data)
        self.bonsaiObj.Z.data = copySupport(self.__thrsdZ, self.bonsaiObj.Z.data)
        self.bonsaiObj.T.data = copySupport(self.__thrsdT, self.bonsaiObj.T.data)

    def train(self, batchSize, totalEpochs, Xtrain, Ytrain):
        numIters = int(np.ceil(float(Xtrain.shape[0]) / float(batchSize)))
        totalBatches = numIters * totalEpochs
        counter, trimlevel, ihtDone = 0, 5, 0
        for i in range(totalEpochs):
            for j in range(numIters):
                batchX = Xtrain[j * batchSize:(j + 1) * batchSize]
                batchY = Ytrain[j * batchSize:(j + 1) * batchSize]
                logits = self.bonsaiObj(batchX)
                loss = nn.functional.cross_entropy(logits, batchY)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

                if (counter >= int(totalBatches / 3.0) and counter < int(2 * totalBatches / 3.0)
                        and counter % trimlevel == 0 and self.isDenseTraining is False):
                    self.runHardThrsd()
                    ihtDone = 1
                elif ihtDone == 1 and self.isDenseTraining is False:
                    self.runSparseTraining()
                counter += 1
            print(f"Epoch Number: {i}  Classification Train Loss: {loss.item():.4f}")


Xtrain = torch.randn(96, 10)
Ytrain = (Xtrain[:, 0] > 0).long() + (Xtrain[:, 1] > 0.5).long()
bonsaiObj = Bonsai(numClasses=3, dataDimension=10, projectionDimension=6, treeDepth=2, sigma=1.0)
bonsaiTrainer = BonsaiTrainer(bonsaiObj, sW=0.5, sT=0.5, sV=0.5, sZ=0.3, learningRate=0.01)
bonsaiTrainer.train(batchSize=16, totalEpochs=6, Xtrain=Xtrain, Ytrain=Ytrain)
print("nonzeros in Z:", int((bonsaiObj.Z != 0).sum()), "of", bonsaiObj.Z.numel())
