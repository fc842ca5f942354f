"""judge.core.namespaces: the identity snapshots find every kind of change, and put things back."""

from __future__ import annotations

import types

from judge.core.namespaces import Group, changes, class_space, intact, module_space, restore


def make_module() -> tuple[types.ModuleType, type, type]:
    module = types.ModuleType("fake_mod")

    class Base:
        def hello(self):
            return "base"

    class Child(Base):
        flag = None

        def hello(self):
            return "child"

    module.Base, module.Child, module.one, module.two = Base, Child, None, None
    return module, Base, Child


def group_of(module: types.ModuleType, *classes: type) -> Group:
    return Group([module_space("fake_mod", module), *[class_space(c) for c in classes]])


def test_an_untouched_group_has_no_changes():
    module, base, child = make_module()
    assert group_of(module, base, child).changed() == []


def test_each_kind_of_change_is_found_in_the_right_space():
    for change in (
        lambda m, b, c: setattr(m, "one", object()),  # rebinding
        lambda m, b, c: delattr(m, "two"),  # deletion
        lambda m, b, c: setattr(m, "three", 3),  # addition
        lambda m, b, c: setattr(c, "hello", lambda self: "patched"),  # a method replaced
        lambda m, b, c: delattr(c, "hello"),  # a method removed (falls back to Base's)
        lambda m, b, c: setattr(c, "__bases__", (type("Other", (b,), {}),)),  # base classes changed
    ):
        module, base, child = make_module()
        group = group_of(module, base, child)
        change(module, base, child)
        found = group.changed()
        assert found and all(not intact(space) for space in found)
        assert [s for s in group.spaces if not intact(s)] == found


def test_a_renamed_last_key_with_the_same_value_is_found():
    module, _, _ = make_module()
    group = group_of(module)
    del module.two  # the last key, whose value is None ...
    module.renamed = None  # ... comes back under another name: same length, same values
    assert group.changed() == [group.spaces[0]]
    assert ("two", "deleted", changes(group.spaces[0])[0][2]) in changes(group.spaces[0])


def test_a_module_class_swap_is_found():
    module, _, _ = make_module()
    group = group_of(module)

    class Sneaky(types.ModuleType):
        pass

    module.__class__ = Sneaky
    assert group.changed() == [group.spaces[0]]


def test_restore_puts_back_the_originals_and_drops_additions():
    module, base, child = make_module()
    group = group_of(module, base, child)
    original = child.hello
    child.hello = lambda self: "patched"
    module.extra = print
    for space in group.changed():
        restore(space, lambda key, value: False)
    group.reread(group.spaces)
    assert child.hello is original and not hasattr(module, "extra")
    assert group.changed() == []
