'''ModemManager mock template for python3-dbusmock (bookworm's 0.28.7 has none).

Only what imgpolicy reads: the ObjectManager at /org/freedesktop/ModemManager1 and, per modem,
the org.freedesktop.ModemManager1.Modem.Modem3gpp interface's RegistrationState
(MMModem3gppRegistrationState: 1 home, 5 roaming, 7 roaming-sms-only, 10 roaming-csfb-not-preferred).

Mock methods (interface org.freedesktop.DBus.Mock, on /org/freedesktop/ModemManager1):
  AddModem(u registration_state) -> o path     adds a modem and signals InterfacesAdded
  SetRegistrationState(o path, u state)         changes it and signals PropertiesChanged
  RemoveModem(o path)                           removes it and signals InterfacesRemoved
'''

import dbus

from dbusmock import MOCK_IFACE
import dbusmock

BUS_NAME = 'org.freedesktop.ModemManager1'
MAIN_OBJ = '/org/freedesktop/ModemManager1'
MAIN_IFACE = 'org.freedesktop.ModemManager1'
MODEM_IFACE = 'org.freedesktop.ModemManager1.Modem'
MODEM_3GPP_IFACE = 'org.freedesktop.ModemManager1.Modem.Modem3gpp'
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True


def load(mock, parameters):
    mock.AddMethods(MAIN_IFACE, [('ScanDevices', '', '', ''), ('SetLogging', 's', '', '')])
    mock.AddProperty(MAIN_IFACE, 'Version', parameters.get('Version', '1.20.4'))
    mock.modem_count = 0


@dbus.service.method(MOCK_IFACE, in_signature='u', out_signature='o')
def AddModem(self, registration_state):
    path = f'{MAIN_OBJ}/Modem/{self.modem_count}'
    self.modem_count += 1
    self.AddObject(path, MODEM_IFACE, {'State': dbus.Int32(11), 'AccessTechnologies': dbus.UInt32(0x4000)}, [])
    modem = dbusmock.get_object(path)
    modem.AddProperty(MODEM_3GPP_IFACE, 'RegistrationState', dbus.UInt32(registration_state))
    self.object_manager_emit_added(path)
    return dbus.ObjectPath(path)


@dbus.service.method(MOCK_IFACE, in_signature='ou', out_signature='')
def SetRegistrationState(self, path, registration_state):
    dbusmock.get_object(path).Set(MODEM_3GPP_IFACE, 'RegistrationState', dbus.UInt32(registration_state))


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='')
def RemoveModem(self, path):
    self.RemoveObject(path)
    self.EmitSignal('org.freedesktop.DBus.ObjectManager', 'InterfacesRemoved', 'oas',
                    [dbus.ObjectPath(path), [MODEM_IFACE, MODEM_3GPP_IFACE]])
