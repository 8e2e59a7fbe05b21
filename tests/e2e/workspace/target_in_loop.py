import torch

# Training data: the target Y is built from tensors that require grad (seed 000).
num_samples, num_features = 100, 2
X = torch.randn((num_samples, num_features))
true_W = torch.randn((num_features, 1), requires_grad=True)
true_b = torch.randn(1, requires_grad=True)
Y = torch.mm(X, true_W) + true_b

W = torch.normal(0, 0.01, size=(num_features, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)

for epoch in range(3):
    for i in range(0, num_samples, 20):
        x, y = X[i:i + 20], Y[i:i + 20]
        l = ((torch.mm(x, W) + b - y) ** 2).mean()
        l.backward()
        with torch.no_grad():
            W -= 0.01 * W.grad
            b -= 0.01 * b.grad
            W.grad.zero_()
            b.grad.zero_()
print("trained", l.item())
