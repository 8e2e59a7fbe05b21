# Source: https://duoke360.com/post/34982
"""The post's first method: disable gradient tracking around the indexed write
(with torch.no_grad():), since the update itself is not to be differentiated."""
import torch

n_users, n_items, dim, lr = 20, 30, 4, 0.05
user_emb = torch.randn(n_users, dim, requires_grad=True)
item_emb = torch.randn(n_items, dim, requires_grad=True)


def predict(users, items):
    return (user_emb[users] * item_emb[items]).sum(dim=1)


for step in range(3):
    users = torch.randint(0, n_users, (16,))
    items = torch.randint(0, n_items, (16,))
    ratings = torch.rand(16) * 5
    loss = ((predict(users, items) - ratings) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        user_emb[users] -= lr * user_emb.grad[users]
        item_emb[items] -= lr * item_emb.grad[items]
    user_emb.grad.zero_()
    item_emb.grad.zero_()
    print(step, loss.item())
