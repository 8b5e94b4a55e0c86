//! (under construction)
use super::Scenario;
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError { pub message: String }
pub fn parse_str(_text: &str, _file: &str) -> Result<Scenario, ScenarioError> { todo!() }
pub fn parse_file(_path: &std::path::Path) -> Result<Scenario, ScenarioError> { todo!() }
