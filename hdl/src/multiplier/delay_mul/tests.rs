use super::*;
use crate::multiplier::column_addends::tree_levels_with_base;
use crate::testing::{drive, simulate};
use ecrt_golden::hw::{exact_limbs, ClassicPass, DelayedFoldContext, FoldValue, Multiplicand};
use ecrt_golden::prime::random_odd;
use num_bigint::RandBigInt;
use rand::rngs::StdRng;
use rand::SeedableRng;

#[test]
fn delay_mul_is_synthesizable() {
    let shape = DelayTiming::shape(20, 2).unwrap();
    let mut uut = DelayMul::new(&shape);
    uut.connect_all();
    yosys_validate("ecrt_delay_mul", &generate_verilog(&uut)).unwrap();
}

#[test]
fn timing_meets_its_two_paths() {
    for k in 1..=16 {
        let t = DelayTiming::new(k);
        // The quotient's path from stage A: A (for even k), M, P, k − 1 cascade stages, the
        // redistribution.
        assert_eq!(2 * t.quotient_delay, k + 1 + usize::from(t.a_register), "k = {k}");
        // The digits' path: digits with their carries into their copy, M, P, the trees into the
        // cascade's head, its k stages and the redistribution: lead turns before their step.
        assert_eq!(2 * t.lead, k + 4 + t.levels, "k = {k}");
        assert!(t.levels >= tree_levels_with_base(k));
    }
}

/// One multiplication or classic pass for a lane, and what the golden model says of it.
#[derive(Clone)]
struct Job {
    a: Vec<u64>,
    b: Vec<u64>,
    h: Vec<u64>,
    /// The classic pass and N′ (`None`: a folding multiplication).
    classic: Option<(ClassicOp, u64)>,
    /// T after each turn from the first step.
    turns: Vec<Vec<u64>>,
    result: Vec<u64>,
    cycles: usize,
}

impl Job {
    fn new(ctx: &DelayedFoldContext, a: &FoldValue, b: &FoldValue) -> Job {
        let trace = ctx.mul_trace(a, b);
        Job {
            a: a.limbs().to_vec(),
            b: b.limbs().to_vec(),
            h: ctx.h().to_vec(),
            classic: None,
            turns: trace.steps.into_iter().map(|s| s.t).collect(),
            result: trace.result.limbs().to_vec(),
            cycles: DelayTiming::new(ctx.shape().limbs_per_step).cycles(ctx.shape()),
        }
    }

    fn classic(ctx: &DelayedFoldContext, op: ClassicOp, a: &[u64], b: &[u64]) -> Job {
        let shape = ctx.shape();
        let pass = ClassicPass::new(shape, ctx.modulus()).unwrap().with_multiplicand(Multiplicand::Windows);
        let trace = pass.delayed_trace(op, a, b);
        Job {
            a: a.to_vec(),
            b: b.to_vec(),
            h: exact_limbs(shape, ctx.modulus())[..shape.modulus_limbs].to_vec(),
            classic: Some((op, pass.n_prime())),
            turns: trace.turns,
            result: trace.result.limbs().to_vec(),
            cycles: DelayTiming::new(shape.limbs_per_step).classic_cycles(shape, op),
        }
    }

    fn result(&self) -> FoldValue {
        FoldValue::from_limbs(self.result.clone())
    }
}

/// What one cycle shows.
struct Cycle {
    lane: usize,
    loaded: bool,
    done: bool,
    done_next: bool,
    result: Vec<u64>,
    t: Vec<u64>,
}

/// Runs `rounds[r][lane]` in each lane, round after round, each loaded at the turn the lane's
/// previous result shows, and checks T after every turn from the first step, the result and its
/// cycle.
fn run_and_check(shape: &DelayedShape, rounds: Vec<[Job; 2]>, what: &str) {
    let timing = DelayTiming::new(shape.limbs_per_step);
    let cycles = (0..2).map(|lane| rounds.iter().map(|r| r[lane].cycles).sum::<usize>()).max().unwrap() + 8;
    let jobs = rounds.clone();
    let mut announced = [0usize; 2];
    let mut loading: Option<usize> = None;
    let trace: Vec<Cycle> = simulate(DelayMul::new(shape), cycles, move |uut, _| {
        let lane = uut.lane.val().index();
        let loaded = loading == Some(lane);
        if loaded {
            let job = &jobs[announced[lane] - 1][lane];
            drive(&mut uut.a_in, &job.a);
            drive(&mut uut.b_in, &job.b);
            drive(&mut uut.m_hat_in, &job.h);
            let (op, n_prime) = job.classic.unwrap_or((ClassicOp::Multiply, 0));
            uut.classic_in.next = job.classic.is_some();
            uut.redc_in.next = op == ClassicOp::WideRedc;
            uut.decrement_in.next = op == ClassicOp::Decremented;
            uut.n_prime_in.next = n_prime.into();
        }
        let next = 1 - lane;
        let announce = announced[next] < jobs.len() && uut.next_free.val();
        if announce {
            announced[next] += 1;
        }
        uut.start_next.next = announce;
        loading = announce.then_some(next);
        Cycle {
            lane,
            loaded,
            done: uut.done.val(),
            done_next: uut.done_next.val(),
            result: uut.result.iter().map(|r| r.val().to_u64()).collect(),
            t: uut.t.iter().map(|t| t.val().to_u64()).collect(),
        }
    });

    for (c, pair) in trace.windows(2).enumerate() {
        assert_eq!(pair[0].done_next, pair[1].done, "{what}, cycle {c}: done announced a cycle ahead");
    }
    for lane in 0..2 {
        let mut start = trace.iter().position(|c| c.lane == lane && c.loaded).unwrap();
        for (n, job) in rounds.iter().map(|r| &r[lane]).enumerate() {
            let at = format!("{what}, lane {lane}, multiplication {n}");
            for (i, t) in job.turns.iter().enumerate() {
                let turn = &trace[start + 2 * (timing.lead + i + 2)];
                assert_eq!(turn.lane, lane, "{at}: the turn is the lane's");
                assert_eq!(&turn.t, t, "{at}, turn {i}: T");
            }
            let done_at = start + job.cycles;
            for (c, cycle) in trace.iter().enumerate().take(done_at).skip(start + 1) {
                assert!(!(cycle.done && cycle.lane == lane), "{at}: done early, cycle {c}");
            }
            let shown = &trace[done_at];
            assert!(shown.done && shown.lane == lane, "{at}: done after {} cycles", job.cycles);
            assert_eq!(shown.result, job.result, "{at}: result");
            if n + 1 < rounds.len() {
                assert!(shown.loaded, "{at}: the next loads as the result shows");
            }
            start = done_at;
        }
    }
}

/// Both lanes multiply (each its own modulus), then square their results as soon as they show:
/// T after every step equals the golden model's limb for limb, every result too, each in exactly
/// `DelayTiming::cycles`.
#[test]
fn both_lanes_match_the_golden_model_step_by_step() {
    let mut rng = StdRng::seed_from_u64(41);
    for (modulus_bits, k) in [(30usize, 1usize), (40, 2), (60, 3), (45, 4)] {
        let shape = DelayTiming::shape(modulus_bits, k).unwrap();
        let d = shape.quotient_delay;
        let jobs: Vec<(Job, Job)> = (0..2)
            .map(|lane| {
                let n = random_odd(modulus_bits as u64, &mut rng);
                let ctx =
                    DelayedFoldContext::new(&n, modulus_bits, k, d).unwrap().with_multiplicand(Multiplicand::Windows);
                // Lane 0 starts from X − 1 twice (the widest operands), lane 1 from random values.
                let mut pick = || if lane == 0 { ctx.bound() - 1u32 } else { rng.gen_biguint_below(ctx.bound()) };
                let (a, b) = (ctx.exact(&pick()), ctx.exact(&pick()));
                let first = Job::new(&ctx, &a, &b);
                (first.clone(), Job::new(&ctx, &first.result(), &first.result()))
            })
            .collect();
        let (l0, l1) = (jobs[0].clone(), jobs[1].clone());
        run_and_check(&shape, vec![[l0.0, l1.0], [l0.1, l1.1]], &format!("k = {k}"));
    }
}

/// Classic passes of every kind in both lanes, beside folding multiplications and after them:
/// T after every turn equals the golden model's limb for limb, every result too, each in exactly
/// `DelayTiming::classic_cycles`. Lane 0 leaves the domain of a folding product (×1), then divides
/// A − 1 for an A whose limb 0 is 0 (the borrow runs into limb 1) and one of 2^17 in limb 0;
/// lane 1 reduces a wide C, squares the result in the folding mode, then multiplies it classically.
#[test]
fn classic_passes_match_the_golden_model_turn_by_turn() {
    let mut rng = StdRng::seed_from_u64(42);
    for (modulus_bits, k) in [(30usize, 1usize), (40, 2), (60, 3), (45, 4)] {
        let shape = DelayTiming::shape(modulus_bits, k).unwrap();
        let (l, d) = (shape.operand_limbs, shape.quotient_delay);
        let contexts: Vec<DelayedFoldContext> = (0..2)
            .map(|_| {
                let n = random_odd(modulus_bits as u64, &mut rng);
                DelayedFoldContext::new(&n, modulus_bits, k, d).unwrap().with_multiplicand(Multiplicand::Windows)
            })
            .collect();
        let (c0, c1) = (&contexts[0], &contexts[1]);
        let one = exact_limbs(&shape, &1u32.into());

        let folded = Job::new(c0, &c0.exact(&(c0.bound() - 1u32)), &c0.exact(&rng.gen_biguint_below(c0.bound())));
        let out = Job::classic(c0, ClassicOp::Multiply, &folded.result, &one);
        // Below 2^(17M) (M = N's limbs: the pass's digits): N's top limb, no more.
        let mut borrowing = exact_limbs(&shape, &rng.gen_biguint_below(c0.modulus()));
        borrowing[0] = 0;
        borrowing[1] = borrowing[1].max(1);
        let mut at_bit_17 = borrowing.clone();
        at_bit_17[0] = 1 << 17;
        at_bit_17[1] -= 1;
        let b = exact_limbs(&shape, &rng.gen_biguint_below(c0.modulus()));
        let lane0 = [
            folded,
            out,
            Job::classic(c0, ClassicOp::Decremented, &borrowing, &b),
            Job::classic(c0, ClassicOp::Decremented, &at_bit_17, &b),
        ];

        let c = rng.gen_biguint_below(&(c1.modulus() << (17 * l)));
        let (c_hi, c_lo) = (exact_limbs(&shape, &(&c >> (17 * l))), exact_limbs(&shape, &c));
        let reduced = Job::classic(c1, ClassicOp::WideRedc, &c_hi, &c_lo);
        let squared = Job::new(c1, &reduced.result(), &reduced.result());
        let multiplied = Job::classic(c1, ClassicOp::Multiply, &squared.result, &reduced.result);
        let lane1 = [reduced, squared, multiplied, Job::new(c1, &c1.exact(&1u32.into()), &c1.exact(&1u32.into()))];

        let rounds = lane0.into_iter().zip(lane1).map(|(a, b)| [a, b]).collect();
        run_and_check(&shape, rounds, &format!("k = {k}"));
    }
}
