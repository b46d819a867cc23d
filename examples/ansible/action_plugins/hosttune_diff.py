# SPDX-License-Identifier: LGPL-2.1-or-later
# hosttune_diff: shows a hosttune plan's or apply's changes as Ansible shows
# a file module's (--diff): the files' unified diff as hosttune made it, then
# the live values as one more diff (a/live, b/live: KEY = FROM, KEY = TO).
# Changed when there is something to show; it changes nothing itself.
#
#   - hosttune_diff:
#       plan: "{{ hosttune_plan.stdout | from_json }}"
#
# plan: the JSON document of hosttune --format json plan (or apply), its
# keys "diff" and "live" (hosttune-json(5)). Ansible finds this file in
# action_plugins/ beside the playbook (or in a role's action_plugins/).
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    _VALID_ARGS = frozenset(('plan',))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        plan = self._task.args.get('plan')
        if not isinstance(plan, dict):
            raise AnsibleActionFail('hosttune_diff: plan: expected the JSON object of '
                                    'hosttune --format json plan or apply')
        text = plan.get('diff') or ''
        minus, plus = [], []
        for l in plan.get('live') or []:
            if l.get('note'):
                continue
            if l.get('from') is not None:
                minus.append('-%s = %s' % (l['key'], l['from']))
            plus.append('+%s = %s' % (l['key'], l['to']))
        if plus:
            text += '--- a/live\n+++ b/live\n@@ -%d,%d +1,%d @@\n%s\n' % (
                1 if minus else 0, len(minus), len(plus), '\n'.join(minus + plus))
        result['changed'] = bool(text)
        if text:
            result['diff'] = {'prepared': text}
        return result
