import torch

# Randomly generate our training samples and train labels
num_samples = 4000
num_features = 2
num_hiddens = 2
# train samples (the "true" parameters are plain data: no gradients attached)
X = torch.randn((num_samples, num_features), dtype=torch.float32)
true_W = torch.randn((num_hiddens, 1), dtype=torch.float32)
true_b = torch.randn(1, dtype=torch.float32)
Y = torch.mm(X, true_W) + true_b

print(X[:5], Y[:5], true_W, true_b)

from utils.Common import relu, sgd, loss, DataLoader


# fc
def fc(x, w, b):
    return relu(torch.mm(x, w) + b)


# Randomly generate W and b and attach gradients
W = torch.normal(0, 0.01, size=(num_hiddens, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)

batch_size = 20
lr = 0.01
num_epochs = 20
dataloader = DataLoader(X, Y, batch_size, shuffle=True)

for epoch in range(num_epochs):
    for x, y in dataloader:
        l = loss(fc(x, W, b), y)
        l.backward()
        sgd([W, b], lr, batch_size)
    if (epoch + 1) % 5 == 0:
        print('Epoch:{}, Loss:{:.4f}'.format(epoch + 1, l))
