import torch


def fit(w, x):
    target = torch.tanh(w * x)
    for step in range(2):
        loss = ((w - target) ** 2).sum()
        loss.backward()


def two_heads(w):
    h = torch.exp(w)
    loss1 = h.sum()
    loss2 = (h * 2).sum()
    loss1.backward()
    loss2.backward()


if __name__ == "__main__":
    import sys

    w = torch.randn(3, requires_grad=True)
    if "fit" in sys.argv:
        fit(w, torch.randn(3))
    else:
        two_heads(w)
    print(w.grad)
