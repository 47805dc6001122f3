use super::*;
use crate::host::{hardware_key, key_id};
use crate::register_model::{KeyShift, RegisterModel, WriteEffect};
use ecrt_golden::PrivateKey;
use rand::SeedableRng;

/// The register model as a bus, with a busy line the test sets.
struct ModelBus {
    model: RegisterModel,
    busy: bool,
    writes: usize,
}

impl RegisterBus for ModelBus {
    type Error = std::io::Error;
    fn read(&mut self, offset: u32) -> Result<u32, Self::Error> {
        Ok(self.model.read(offset, self.busy))
    }
    fn write(&mut self, offset: u32, value: u32) -> Result<(), Self::Error> {
        self.writes += 1;
        self.model.write(offset, value, self.busy);
        Ok(())
    }
}

fn config() -> AcceleratorConfig {
    AcceleratorConfig { key_bits: 512, cores: 3, stream_bits: 64, ..Default::default() }
}

#[test]
fn a_key_loads_and_commits_through_the_register_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let key = PrivateKey::generate(512, &mut rng).unwrap();
    let mut bus = ModelBus { model: RegisterModel::new(&config()), busy: false, writes: 0 };
    let info = DeviceInfo::probe(&mut bus).unwrap();
    assert_eq!(info.config(), config());
    assert_eq!(info.layout().unwrap(), config().frame_layout().unwrap());
    let hw = hardware_key(&key, &info.config()).unwrap();
    let id = key_id(key.public().n());
    load_key(&mut bus, &hw, info.window_bits, id).unwrap();
    assert!(bus.model.key_valid());
    assert_eq!(bus.model.key_id(), id);

    // Busy: refused before any write.
    bus.busy = true;
    let before = bus.writes;
    assert!(matches!(load_key(&mut bus, &hw, info.window_bits, id), Err(SessionError::Busy)));
    assert_eq!(bus.writes, before);
}

#[test]
fn probing_refuses_what_is_not_this_interface() {
    struct Fixed(Vec<(u32, u32)>);
    impl RegisterBus for Fixed {
        type Error = std::io::Error;
        fn read(&mut self, offset: u32) -> Result<u32, Self::Error> {
            Ok(self.0.iter().find(|(o, _)| *o == offset).map_or(0, |(_, v)| *v))
        }
        fn write(&mut self, _: u32, _: u32) -> Result<(), Self::Error> {
            Ok(())
        }
    }
    let model = RegisterModel::new(&config());
    let registers: Vec<(u32, u32)> = itf::REGISTERS.iter().map(|r| (r.offset, model.read(r.offset, false))).collect();
    let with = |offset: u32, value: u32| {
        let mut r = registers.clone();
        r.iter_mut().filter(|(o, _)| *o == offset).for_each(|(_, v)| *v = value);
        DeviceInfo::probe(&mut Fixed(r))
    };
    assert!(with(itf::REG_ID, 0).unwrap_err().to_string().contains("not an ecrt accelerator"));
    assert!(with(itf::REG_VERSION, 0x0001_0000).unwrap_err().to_string().contains("version 1.0"));
    assert!(matches!(with(itf::REG_DIGITS, 7), Err(SessionError::Digits { read: 7, .. })));
    assert!(matches!(with(itf::REG_CORES, 0), Err(SessionError::Config { .. })));
    assert!(with(itf::REG_KEY_BITS, 2048).is_err(), "DIGITS no longer fits KEY_BITS");
    assert!(with(itf::REG_STATUS, 0xFFFF_FFFF).is_ok());
}

#[test]
fn a_refused_write_spoils_the_load() {
    let mut m = RegisterModel::new(&config());
    assert_eq!(m.write(itf::REG_KEY_DATA, 1, false), None);
    assert_eq!(m.read(itf::REG_ERRORS, false), itf::ERROR_KEY_LOAD_REFUSED);
    m.write(itf::REG_ERRORS, itf::ERROR_KEY_LOAD_REFUSED, false);
    m.write(itf::REG_KEY_CONTROL, itf::KEY_CONTROL_BEGIN, false);
    m.write(itf::REG_KEY_SELECT, itf::key_select(true, 3), false);
    assert_eq!(
        m.write(itf::REG_KEY_DATA, 0xF_FFFF, false),
        Some(WriteEffect::KeyShift(KeyShift { q_path: true, target: 3, data: 0x1_FFFF }))
    );
    assert_eq!(m.write(itf::REG_KEY_DATA, 5, true), None, "busy");
    m.write(itf::REG_KEY_CONTROL, itf::key_control_commit(9), false);
    assert!(!m.key_valid(), "a spoiled load never commits");
    let before = (m.read(itf::REG_STATUS, false), m.read(itf::REG_KEY_SELECT, false));
    assert_eq!(m.write(itf::REG_CONTROL, itf::CONTROL_SOFT_RESET, true), Some(WriteEffect::SoftReset), "never refused");
    assert_eq!(m.write(itf::REG_CONTROL, 0, false), None);
    assert_eq!((m.read(itf::REG_STATUS, false), m.read(itf::REG_KEY_SELECT, false)), before, "the key stays");
    assert_eq!(m.read(itf::REG_CONTROL, false), 0, "write-only");
    assert_eq!(m.read(itf::REG_STATUS, false), itf::STATUS_KEY_LOADING);
    m.job_in();
    m.job_out(itf::RESULT_MALFORMED);
    m.refused(itf::RESULT_MALFORMED);
    assert_eq!((m.read(itf::REG_JOBS_IN, false), m.read(itf::REG_JOBS_FAILED, false)), (1, 1));
    assert_eq!(m.read(itf::REG_ERRORS, false), itf::ERROR_KEY_LOAD_REFUSED | itf::ERROR_MALFORMED);
}
