// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// The devnet's demo contract: a plain storage slot, a mapping, events,
/// a gas burner for varying block load, and two kinds of revert.
contract Demo {
    uint256 public counter; // slot 0
    mapping(address => uint256) public balances; // slot 1
    address public owner; // slot 2

    event Incremented(address indexed by, uint256 value);
    event Deposited(address indexed account, uint256 indexed tag, uint256 amount);

    error NotAllowed(address caller, uint256 code);

    constructor(uint256 initial) {
        counter = initial;
        owner = msg.sender;
        balances[msg.sender] = initial;
    }

    function increment() external {
        counter += 1;
        emit Incremented(msg.sender, counter);
    }

    function deposit(uint256 tag) external payable {
        balances[msg.sender] += msg.value;
        emit Deposited(msg.sender, tag, msg.value);
    }

    function setBalance(address account, uint256 amount) external {
        balances[account] = amount;
        emit Deposited(account, 0, amount);
    }

    /// Expands memory to `words` 32-byte words: 3w + w*w/512 gas for almost no work, so seeding
    /// can fill blocks to any gas use quickly and without growing the state.
    function burn(uint256 words) external pure {
        assembly {
            mstore(mul(sub(words, 1), 32), 1)
        }
    }

    /// The gas an eth_call was given, as the EVM sees it (shows the gateway's gas cap).
    function gasLeft() external view returns (uint256) {
        return gasleft();
    }

    function failWithReason() external pure {
        revert("Demo: not allowed");
    }

    function failWithCustomError() external view {
        revert NotAllowed(msg.sender, 42);
    }
}
