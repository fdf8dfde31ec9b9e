//! Loop fusion in `_vjp`: an adjoint loop whose seed is known before its
//! primal loop runs is moved into that loop.
//!
//! The reverse pass puts the adjoint of a loop after everything the primal
//! does after it. When nothing in between decides the adjoint loop's work, the
//! two passes can run together, one iteration of each per trip: the values an
//! adjoint iteration reads are still in registers, and a value taped by the
//! primal iteration for the adjoint one is used directly (the tape goes away).
//! A sum of terms returned as is, the usual loss, is the case this is for:
//!
//! ```text
//! for i in 0..n { s += f(x[i]); }            for i in 0..n {
//! let d_s = d_out;                    ⇒          s += f(x[i]);
//! for i in (0..n).rev() {                        d_x[i] += d_s * f'(x[i]);
//!     d_x[i] += d_s * f'(x[i]);              }
//! }
//! ```
//!
//! An adjoint loop `R` at the top level of the body is fused into an earlier
//! primal loop `P` visiting the same indices when running each iteration of
//! `R` early, at the end of the same iteration of `P`, changes nothing:
//!
//! 1. `R` carries no adjoint that changes from one iteration to the next (an
//!    accumulated scalar adjoint would need the iterations in `R`'s order);
//! 2. every value `R` reads from outside is available before `P`, or is pure
//!    arithmetic on such values (then it moves before `P`): the seed, the
//!    shadows, constants, but not `P`'s result;
//! 3. `R` reads no buffer that `P`, the code between or `R` itself writes;
//! 4. `R`'s only effects are `+=`/`-=` into buffers that `P` and the code
//!    between use in no other way (the shadows of read-only buffers): such
//!    additions commute, so moving them earlier changes only their rounding;
//! 5. `R` pops only tapes that `P` pushes: in the fused loop each iteration
//!    pops what the same iteration pushed. Where the push and the pop end up in
//!    the same region, the popped value is the pushed one, and the tape goes.
//!
//! The split API (`f_forward`) is emitted from the unfused IR: its pullback
//! gets the seed only after the primal has run.

use std::collections::{HashMap, HashSet};

use crate::ir::compact;
use crate::ir::{BinOp, Const, Function, Inst, Loop, LoopRange, Place, Ty, Value};

/// `func` (a `_vjp` whose first `primal_len` values are the primal's) with
/// every adjoint loop that can be fused moved into its primal loop.
pub(crate) fn fuse_loops(mut func: Function, primal_len: usize) -> Function {
    let mut fused = Vec::new();
    while let Some(plan) = find(&func, primal_len) {
        apply(&mut func, &plan);
        fused.push(plan.primal);
    }
    if fused.is_empty() {
        return func;
    }
    forward_pops(&mut func);
    for primal in fused {
        reuse_primal_values(&mut func, primal);
    }
    drop_unused_keeps(&mut func);
    let mut live = vec![false; func.insts.len()];
    func.walk(&mut |_, value| live[value.index()] = true);
    compact(&func, &live)
}

/// A fusion to make: `adjoint`'s iterations go at the end of `primal`'s, and
/// `hoist` (values between them that the adjoint reads) goes before
/// `primal`.
struct Plan {
    primal: Value,
    adjoint: Value,
    hoist: Vec<Value>,
    /// For each value the adjoint loop carries: whether it is a sum its
    /// iterations add to (else it stays what it was).
    sums: Vec<bool>,
}

fn find(func: &Function, primal_len: usize) -> Option<Plan> {
    let body = &func.body.insts;
    for (adjoint_pos, &adjoint) in body.iter().enumerate() {
        let Inst::For { range, .. } = func.inst(adjoint) else {
            continue;
        };
        if adjoint.index() < primal_len {
            continue;
        }
        for primal_pos in (0..adjoint_pos).rev() {
            let primal = body[primal_pos];
            if primal.index() >= primal_len {
                continue;
            }
            let Inst::For { range: visits, .. } = func.inst(primal) else {
                continue;
            };
            if !same_indices(visits, range) {
                continue;
            }
            if let Some((hoist, sums)) = fusable(func, primal_pos, adjoint_pos) {
                return Some(Plan {
                    primal,
                    adjoint,
                    hoist,
                    sums,
                });
            }
        }
    }
    None
}

/// Whether two loops visit the same indices (in either order: an adjoint
/// loop whose iterations are independent may run forwards, see
/// [`run_forward`](super::run_forward)).
fn same_indices(a: &LoopRange, b: &LoopRange) -> bool {
    a.start == b.start && a.end == b.end && a.inclusive == b.inclusive && a.step == b.step
}

/// The values the loop at `adjoint_pos` needs moved before the loop at
/// `primal_pos` to be fused into it, and which of its carried values are
/// sums; `None` if it cannot be fused.
fn fusable(
    func: &Function,
    primal_pos: usize,
    adjoint_pos: usize,
) -> Option<(Vec<Value>, Vec<bool>)> {
    let body = &func.body.insts;
    let adjoint = body[adjoint_pos];
    let view = func.inst(adjoint).as_loop().expect("a loop");
    let inside = func.nested(adjoint);
    let inside_set: HashSet<Value> = inside.iter().copied().collect();
    // 1. Each carried adjoint stays what it was, or is a sum.
    let sums = (0..view.inits.len())
        .map(|k| carried(func, &view, &inside, k))
        .collect::<Option<Vec<bool>>>()?;

    // 3–5. What the adjoint loop reads, adds into and pops.
    let Effects {
        loaded,
        added,
        popped,
    } = effects(func, &inside)?;
    // A buffer field of a struct is also reached through the struct and its
    // enclosing fields (a callee's pullback taking `&mut d_p.layer`).
    let loaded = Aliases::new(func, &loaded);
    let added = Aliases::new(func, &added);
    if loaded
        .paths
        .iter()
        .any(|(root, path)| added.reaches(*root, path))
    {
        return None;
    }
    let mut pushed_inside = HashSet::new();
    for (pos, &top) in body.iter().enumerate().take(adjoint_pos).skip(primal_pos) {
        let mut values = vec![top];
        values.extend(func.nested(top));
        for value in values {
            let inst = func.inst(value);
            if func
                .bases(inst.written())
                .iter()
                .any(|&buf| loaded.touches(func, buf))
            {
                return None;
            }
            match inst {
                Inst::Update(BinOp::Add | BinOp::Sub, buf, index, addend) => {
                    if [index, addend]
                        .iter()
                        .any(|&&value| added.touches(func, value))
                        || (pos == primal_pos && added.touches(func, *buf))
                    {
                        return None;
                    }
                }
                // Pure, or adds into a float field (never a buffer's element).
                Inst::Len(_) | Inst::Field { .. } => {}
                Inst::FieldUpdate { value, .. } => {
                    if added.touches(func, *value) {
                        return None;
                    }
                }
                Inst::Push(tape, pushed) if popped.contains(tape) => {
                    if pos != primal_pos || added.touches(func, *pushed) {
                        return None;
                    }
                    pushed_inside.insert(*tape);
                }
                Inst::Pop(tape) | Inst::TapeReserve { tape, .. } if popped.contains(tape) => {
                    if pos != primal_pos {
                        return None;
                    }
                }
                inst => {
                    if inst
                        .operands()
                        .iter()
                        .any(|&value| added.touches(func, value))
                    {
                        return None;
                    }
                }
            }
        }
    }
    if popped.iter().any(|tape| !pushed_inside.contains(tape)) {
        return None;
    }

    // 2. What the adjoint loop reads from outside is available before the
    // primal loop, or can be moved there.
    let position: HashMap<Value, usize> = body
        .iter()
        .enumerate()
        .map(|(pos, &value)| (value, pos))
        .collect();
    // A sum starts from zero in the fused loop; its initial value is added
    // after it.
    let mut outside: Vec<Value> = view
        .inits
        .iter()
        .zip(&sums)
        .filter(|(_, sum)| !**sum)
        .map(|(&init, _)| init)
        .collect();
    for &value in &inside {
        let inst = func.inst(value);
        outside.extend(inst.operands());
        for region in func.regions(value) {
            outside.extend(region.yields.iter().copied());
        }
    }
    outside.extend(view.body.yields.iter().copied());
    outside.retain(|value| !inside_set.contains(value));
    let mut hoist = HashSet::new();
    let mut stack = outside;
    while let Some(value) = stack.pop() {
        let &pos = position.get(&value)?;
        if pos < primal_pos || hoist.contains(&value) {
            continue;
        }
        if pos >= adjoint_pos || pos == primal_pos || !hoistable(func, value) {
            return None;
        }
        hoist.insert(value);
        stack.extend(func.inst(value).operands());
    }
    let mut hoist: Vec<Value> = hoist.into_iter().collect();
    hoist.sort_by_key(|value| position[value]);
    Some((hoist, sums))
}

/// Whether the adjoint loop's `k`-th carried value is a sum (`Some(true)`:
/// each iteration adds to it, and reads it nowhere else), stays what it was
/// (`Some(false)`), or neither (`None`).
pub(super) fn carried(
    func: &Function,
    view: &Loop<'_>,
    inside: &[Value],
    k: usize,
) -> Option<bool> {
    let (arg, next) = (view.args()[k], view.next()[k]);
    if next == arg {
        return Some(false);
    }
    let adds_to_arg = match func.inst(next) {
        Inst::Binary(BinOp::Add, lhs, rhs) => (*lhs == arg) != (*rhs == arg),
        Inst::Binary(BinOp::Sub, lhs, rhs) => *lhs == arg && *rhs != arg,
        _ => false,
    };
    if !adds_to_arg || !view.body.insts.contains(&next) {
        return None;
    }
    // Neither the carried value nor the sum is read by anything else.
    let mut uses = 0;
    for &value in inside {
        let inst = func.inst(value);
        uses += inst
            .operands()
            .iter()
            .filter(|&&operand| operand == arg || operand == next)
            .count();
        for region in func.regions(value) {
            uses += region
                .yields
                .iter()
                .filter(|&&yielded| yielded == arg || yielded == next)
                .count();
        }
    }
    let yielded = view
        .body
        .yields
        .iter()
        .filter(|&&v| v == arg || v == next)
        .count();
    (uses == 1 && yielded == 1).then_some(true)
}

/// Buffers, each as the value it is reached from and the field path from
/// there (`d_p` and `layer.w` for `d_p.layer.w`; a parameter and no path).
struct Aliases {
    paths: Vec<(Value, Vec<syn::Member>)>,
}

impl Aliases {
    fn new(func: &Function, bufs: &HashSet<Value>) -> Self {
        Aliases {
            paths: bufs.iter().map(|&buf| path(func, buf)).collect(),
        }
    }

    /// Whether `value` may be one of the buffers, or contain one.
    fn touches(&self, func: &Function, value: Value) -> bool {
        let (root, path) = path(func, value);
        self.reaches(root, &path)
    }

    fn reaches(&self, root: Value, path: &[syn::Member]) -> bool {
        self.paths.iter().any(|(other_root, other)| {
            let common = other.len().min(path.len());
            *other_root == root && other[..common] == path[..common]
        })
    }
}

/// The value `value` is a field of, however deep, and the path to it.
pub(super) fn path(func: &Function, value: Value) -> (Value, Vec<syn::Member>) {
    match func.inst(value) {
        Inst::Field { base, path: fields } => {
            let (root, mut path) = self::path(func, *base);
            path.extend(fields.iter().cloned());
            (root, path)
        }
        _ => (value, Vec::new()),
    }
}

/// What the instructions of a loop body read, add into and pop.
pub(super) struct Effects {
    pub(super) loaded: HashSet<Value>,
    pub(super) added: HashSet<Value>,
    pub(super) popped: HashSet<Value>,
}

/// The buffers `inside` reads and adds into, and the tapes it pops; `None`
/// if it does anything else (writes, calls, shadows of its own).
pub(super) fn effects(func: &Function, inside: &[Value]) -> Option<Effects> {
    let mut effects = Effects {
        loaded: HashSet::new(),
        added: HashSet::new(),
        popped: HashSet::new(),
    };
    for &value in inside {
        match func.inst(value) {
            inst if no_effect(inst) => {}
            Inst::Load(buf, _) => {
                effects.loaded.insert(*buf);
            }
            Inst::Update(BinOp::Add | BinOp::Sub, buf, ..) => {
                effects.added.insert(*buf);
            }
            Inst::Pop(tape) => {
                effects.popped.insert(*tape);
            }
            // A call of the user's made again for its pullback, and the
            // pullback applied, when only numbers are passed: no buffer is
            // read or written (the call ran in the primal loop with the same
            // arguments, so it does not panic here either).
            Inst::Forward { callee, args, .. }
                if by_value(args) && !func.user_calls[*callee as usize].into => {}
            Inst::Apply { args, .. } if by_value(args) => {}
            _ => return None,
        }
    }
    Some(effects)
}

/// Whether a call passes only numbers (no buffer, by `&` or `&mut`).
pub(super) fn by_value(args: &[(Value, crate::ir::Mode)]) -> bool {
    args.iter().all(|(_, mode)| *mode == crate::ir::Mode::Val)
}

/// Whether an instruction of a loop body has no effect of its own (a nested
/// `if` or loop may: its body is looked at separately).
pub(super) fn no_effect(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Arg(_)
            | Inst::Const(_)
            | Inst::Unary(..)
            | Inst::Binary(..)
            | Inst::Cast(..)
            | Inst::Prim(..)
            | Inst::Pullback(..)
            | Inst::Detach(_)
            | Inst::Tuple(_)
            | Inst::Extract(..)
            | Inst::If { .. }
            | Inst::For { .. }
            | Inst::While { .. }
            | Inst::Len(_)
    )
}

/// Whether a value can be computed earlier than the IR has it: pure, and
/// unable to panic.
pub(super) fn hoistable(func: &Function, value: Value) -> bool {
    match func.inst(value) {
        Inst::Param(_)
        | Inst::Const(_)
        | Inst::Unary(..)
        | Inst::Cast(..)
        | Inst::Prim(..)
        | Inst::Detach(_)
        | Inst::Tuple(_)
        | Inst::Field { .. } => true,
        Inst::Binary(BinOp::Div | BinOp::Rem, ..) => func.ty(value).is_float(),
        Inst::Binary(..) => true,
        // Zeros shaped like a buffer whose length never changes (`push` on a
        // local `Vec` would make an earlier shadow too short).
        Inst::Shadow { of } => {
            let mut grows = false;
            func.walk(&mut |_, value| {
                grows |= matches!(func.inst(value), Inst::PushElem(buf, _) if buf == of);
            });
            !grows
        }
        // A parameter's length never changes (a local `Vec` may grow).
        Inst::Len(buf) => func.is_param(*buf),
        _ => false,
    }
}

fn apply(func: &mut Function, plan: &Plan) {
    let view = func.inst(plan.adjoint).as_loop().expect("a loop");
    let n_args = 1 + view.inits.len();
    let adjoint_args = view.body.insts[..n_args].to_vec();
    let next = view.next().to_vec();
    let moved = view.body.insts[n_args..].to_vec();
    let inits = view.inits.to_vec();
    let primal_view = func.inst(plan.primal).as_loop().expect("a loop");
    let primal_index = primal_view.body.insts[0];
    let mut n_carried = primal_view.inits.len();

    let mut replace: HashMap<Value, Value> = HashMap::new();
    replace.insert(adjoint_args[0], primal_index);
    // Each sum becomes a value the primal loop carries, from zero; after the
    // loop its initial value is added to it.
    let mut zeros = Vec::new();
    let mut results = HashMap::new();
    for (k, &sum) in plan.sums.iter().enumerate() {
        let arg = adjoint_args[k + 1];
        if !sum {
            replace.insert(arg, inits[k]);
            continue;
        }
        let (ty, span) = (func.ty(arg).clone(), func.span(arg));
        let zero = func.push_detached(Inst::Const(Const::Zero), ty.clone(), span);
        let position = u32::try_from(n_carried + 1).expect("small");
        let new_arg = func.push_detached(Inst::Arg(position), ty.clone(), span);
        func.adjoint_of[new_arg.index()] = func.adjoint_of[arg.index()];
        replace.insert(arg, new_arg);
        let Inst::For {
            inits: primal_inits,
            body: primal_body,
            ..
        } = &mut func.insts[plan.primal.index()].inst
        else {
            unreachable!("a `for`")
        };
        primal_inits.push(zero);
        primal_body.insts.insert(n_carried + 1, new_arg);
        primal_body.yields.push(next[k]);
        if let Ty::Tuple(tys) = &mut func.insts[plan.primal.index()].ty {
            tys.push(ty.clone());
        }
        let index = u32::try_from(n_carried).expect("small");
        let extract = func.push_detached(Inst::Extract(plan.primal, index), ty.clone(), span);
        zeros.push(zero);
        if matches!(func.inst(inits[k]), Inst::Const(Const::Zero)) {
            results.insert(k, vec![extract]);
        } else {
            let total = func.push_detached(Inst::Binary(BinOp::Add, inits[k], extract), ty, span);
            results.insert(k, vec![extract, total]);
        }
        n_carried += 1;
    }
    // The adjoint loop's results: its initial values, or the sums.
    let mut extracts = HashMap::new();
    for &value in &func.body.insts {
        if let Inst::Extract(tuple, index) = func.inst(value)
            && *tuple == plan.adjoint
        {
            let k = *index as usize;
            match results.get(&k).and_then(|result| result.last()) {
                Some(&total) => {
                    replace.insert(value, total);
                    func.adjoint_of[total.index()] = func.adjoint_of[value.index()];
                }
                None => {
                    replace.insert(value, inits[k]);
                }
            }
            extracts.insert(value, k);
        }
    }

    let hoisted: HashSet<Value> = plan.hoist.iter().copied().collect();
    let mut top = Vec::with_capacity(func.body.insts.len() + 3 * zeros.len());
    for &value in &func.body.insts {
        if value == plan.primal {
            top.extend(&plan.hoist);
            top.extend(&zeros);
        }
        if value == plan.adjoint {
            // The sums, where the adjoint loop was.
            let mut sums: Vec<_> = results.iter().collect();
            sums.sort_by_key(|(k, _)| **k);
            top.extend(
                sums.into_iter()
                    .flat_map(|(_, result)| result.iter().copied()),
            );
        }
        if value != plan.adjoint && !extracts.contains_key(&value) && !hoisted.contains(&value) {
            top.push(value);
        }
    }
    func.body.insts = top;
    func.region_mut(Place::In(plan.primal, 0))
        .insts
        .extend(moved);
    func.replace_uses(&replace);
}

/// In a fused loop's body, an adjoint value that repeats a primal one (the
/// adjoint loop re-read `x[i]` and recomputed `1.0 - x[i]`) is that value:
/// it goes, and its uses read the first. Only pure arithmetic, and reads of
/// buffers the loop does not write, are merged.
fn reuse_primal_values(func: &mut Function, for_value: Value) {
    let inside = func.nested(for_value);
    let written: HashSet<Value> = inside
        .iter()
        .flat_map(|&value| func.bases(func.inst(value).written()))
        .collect();
    let operand = |func: &Function, value: Value| match func.inst(value) {
        Inst::Const(Const::Lit(lit)) => format!("{lit}:{:?}", func.ty(value)),
        Inst::Const(Const::Bool(b)) => b.to_string(),
        _ => format!("%{}", value.0),
    };
    let mut first: HashMap<String, Value> = HashMap::new();
    let mut replace: HashMap<Value, Value> = HashMap::new();
    let insts = func.region_mut(Place::In(for_value, 0)).insts.clone();
    let mut kept = Vec::with_capacity(insts.len());
    for value in insts {
        let map = |value: Value| replace.get(&value).copied().unwrap_or(value);
        let mut inst = func.inst(value).clone();
        inst.map_operands(map);
        let operands = |values: &[Value]| {
            values
                .iter()
                .map(|&value| operand(func, value))
                .collect::<Vec<_>>()
                .join(",")
        };
        let ty = func.ty(value);
        let key = match &inst {
            Inst::Unary(op, arg) => Some(format!("{op:?}({}):{ty:?}", operands(&[*arg]))),
            Inst::Binary(op, lhs, rhs) => {
                Some(format!("{op:?}({}):{ty:?}", operands(&[*lhs, *rhs])))
            }
            Inst::Cast(arg, to) => Some(format!("cast({}):{to:?}", operands(&[*arg]))),
            Inst::Prim(prim, args) => Some(format!("{prim:?}({}):{ty:?}", operands(args))),
            Inst::Load(buf, index) if !written.contains(buf) => {
                Some(format!("load({})", operands(&[*buf, *index])))
            }
            // The adjoint's call of the user's, made again for its pullback,
            // is the primal's call (see `effects`), and so are its parts.
            Inst::Forward { callee, args, .. } if by_value(args) => {
                let args: Vec<Value> = args.iter().map(|(arg, _)| *arg).collect();
                Some(format!("forward{callee}({})", operands(&args)))
            }
            Inst::Extract(tuple, k) => Some(format!("extract({}).{k}", operands(&[*tuple]))),
            _ => None,
        };
        match key.and_then(|key| match first.get(&key) {
            Some(&earlier) => Some(earlier),
            None => {
                first.insert(key, value);
                None
            }
        }) {
            Some(earlier) => {
                replace.insert(value, earlier);
            }
            None => kept.push(value),
        }
    }
    func.region_mut(Place::In(for_value, 0)).insts = kept;
    func.replace_uses(&replace);
}

/// Every region of `func`: the body, then each `if`'s and loop's.
pub(super) fn region_places(func: &Function) -> Vec<Place> {
    let mut places = vec![Place::Body];
    func.walk(&mut |_, value| {
        for index in 0..func.regions(value).len() {
            let index = u8::try_from(index).expect("at most two regions");
            places.push(Place::In(value, index));
        }
    });
    places
}

/// Removes what a fused loop kept of a call's pullback for its adjoint
/// (see [`Inst::Keep`]): the adjoint's call made again is now the primal's
/// call itself (see [`reuse_primal_values`]), which reads the pullback
/// where it is, and a `keep` left in place would move it away.
fn drop_unused_keeps(func: &mut Function) {
    let uses = func.uses();
    let mut unused = HashSet::new();
    func.walk(&mut |_, value| {
        if matches!(func.inst(value), Inst::Keep(..)) && uses[value.index()].is_empty() {
            unused.insert(value);
        }
    });
    for place in region_places(func) {
        func.region_mut(place)
            .insts
            .retain(|value| !unused.contains(value));
    }
}

/// In each region, a pop that follows a push onto the same tape, with no use
/// of that tape in between, reads the pushed value: both go, and a tape left
/// with neither pushes nor pops goes too.
fn forward_pops(func: &mut Function) {
    let places = region_places(func);
    let mut replace = HashMap::new();
    let mut removed = HashSet::new();
    for place in places {
        let insts = func.region_mut(place).insts.clone();
        // The last push onto each tape in this region, if no use followed it.
        let mut last_push: HashMap<Value, (Value, Value)> = HashMap::new();
        for &value in &insts {
            match func.inst(value) {
                Inst::Push(tape, pushed) => {
                    last_push.insert(*tape, (value, *pushed));
                }
                Inst::Pop(tape) => {
                    if let Some((push, pushed)) = last_push.remove(tape) {
                        replace.insert(value, pushed);
                        removed.extend([push, value]);
                    }
                }
                _ => {
                    for inner in func.nested(value) {
                        if let Inst::Push(tape, _) | Inst::Pop(tape) = func.inst(inner) {
                            last_push.remove(tape);
                        }
                    }
                }
            }
        }
        func.region_mut(place)
            .insts
            .retain(|value| !removed.contains(value));
    }
    func.replace_uses(&replace);

    // Tapes nobody pushes onto any more.
    let mut used = HashSet::new();
    func.walk(&mut |_, value| {
        if let Inst::Push(tape, _) | Inst::Pop(tape) = func.inst(value) {
            used.insert(*tape);
        }
    });
    let mut unused = HashSet::new();
    func.walk(&mut |_, value| match func.inst(value) {
        Inst::TapeNew { .. } if !used.contains(&value) => {
            unused.insert(value);
        }
        Inst::TapeReserve { tape, .. } if !used.contains(tape) => {
            unused.insert(value);
        }
        _ => {}
    });
    if unused.is_empty() {
        return;
    }
    for place in region_places(func) {
        func.region_mut(place)
            .insts
            .retain(|value| !unused.contains(value));
    }
    debug_assert!(
        unused
            .iter()
            .all(|&tape| matches!(func.ty(tape), Ty::Tape(_) | Ty::Unit))
    );
}
