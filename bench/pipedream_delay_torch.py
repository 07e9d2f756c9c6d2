#!/usr/bin/env python3
"""PyTorch's view of PipeDream's staleness, independent of metac: joint
training of bench/specs/deep_joint.meta's model (1-256x5-1 ReLU MLP, 64
sinusoid tasks of 64 samples, MSE, Adam at 1e-3) with the update of step t
using the gradient of step t - delay. Prints the mean loss per 30
iterations for delays 0, 1 and 2. Debian's python3-torch is enough:
  /usr/bin/python3 bench/pipedream_delay_torch.py
"""
import torch, math
torch.manual_seed(0)
def model():
    layers=[torch.nn.Linear(1,256),torch.nn.ReLU()]
    for _ in range(4): layers+= [torch.nn.Linear(256,256),torch.nn.ReLU()]
    layers.append(torch.nn.Linear(256,1)); return torch.nn.Sequential(*layers)
def batch(g):
    A=torch.rand(64,1,1,generator=g)*4.9+0.1; P=torch.rand(64,1,1,generator=g)*math.pi
    x=torch.rand(64,64,1,generator=g)*10-5; return x, A*torch.sin(x+P)
for delay in [0,1,2]:
    torch.manual_seed(1); m=model(); opt=torch.optim.Adam(m.parameters(),lr=1e-3)
    g=torch.Generator().manual_seed(2); pending=[]; losses=[]
    for it in range(300):
        x,y=batch(g); loss=((m(x)-y)**2).mean(); grads=torch.autograd.grad(loss,list(m.parameters()))
        losses.append(loss.item()); pending.append(grads)
        if len(pending)>delay:
            gr=pending.pop(0)
            for p,gg in zip(m.parameters(),gr): p.grad=gg
            opt.step()
    print('delay',delay,' '.join('%.3f'%(sum(losses[i:i+30])/30) for i in range(0,300,30)))
