# Pyro 0.2-style parameter store: pyro.param(name, init_tensor) stores the unconstrained value of
# init_tensor the first time a name is seen and returns the constrained value afterwards. The user
# initializes a parameter from a tensor computed from another one that requires grad (b = a + 1).
import weakref

import torch
from torch.distributions import constraints, transform_to

torch.manual_seed(0)


class ParamStoreDict(object):
    def __init__(self):
        self._params = {}
        self._param_to_name = {}
        self._constraints = {}

    def get_param(self, name, init_tensor=None, constraint=constraints.real):
        if name not in self._params:
            assert init_tensor is not None, \
                "cannot initialize a parameter '{}' with None. Did you get the param name right?".format(name)
            if callable(init_tensor):
                init_tensor = init_tensor()

            # store the unconstrained value and constraint
            with torch.no_grad():
                unconstrained_param = transform_to(constraint).inv(init_tensor)
            unconstrained_param.requires_grad = True
            self._params[name] = unconstrained_param
            self._constraints[name] = constraint
            self._param_to_name[unconstrained_param] = name
        elif init_tensor is not None and not callable(init_tensor):
            if self._params[name].shape != init_tensor.shape:
                raise ValueError("param {} init tensor shape does not match existing value".format(name))

        unconstrained_param = self._params[name]
        param = transform_to(self._constraints[name])(unconstrained_param)
        param.unconstrained = weakref.ref(unconstrained_param)
        return param


_PYRO_PARAM_STORE = ParamStoreDict()


def param(name, *args, **kwargs):
    return _PYRO_PARAM_STORE.get_param(name, *args, **kwargs)


a = torch.rand(3, 4, requires_grad=True)
b = a + 1
param("b", b)

loss = (param("b") ** 2).sum()
loss.backward()
print("grad of a:", a.grad.sum().item())
